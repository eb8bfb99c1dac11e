"""The dates a question names, in any language and relative to today, against the dates
of day notes (``vaultlink/index/dates.py``; the date list of ``search``)."""

from __future__ import annotations

from datetime import date

import pytest

from tests.vaults import write_note
from vaultlink.index.dates import date_spans, relative_ranges, within
from vaultlink.index.recall import Indexes
from vaultlink.vault.notes import Vault


@pytest.mark.parametrize("question, spans", [
    ("Was hat Anna am 8. Mai 2023 gesagt?", [(2023, 5, 8)]),
    ("Wohin sind wir im März gefahren?", [(None, 3, None)]),
    ("Qu'avons-nous fait le 14 juillet 2023 ?", [(2023, 7, 14)]),
    ("¿Qué dijo Ana el 8 de mayo de 2023?", [(2023, 5, 8)]),
    ("Cosa abbiamo fatto a settembre?", [(None, 9, None)]),
    ("O que fizemos em março de 2022?", [(2022, 3, None)]),
    ("Wat deden we in mei?", [(None, 5, None)]),
    ("Что мы делали 8 мая 2023?", [(2023, 5, 8)]),
    ("Куда мы ездили в июне?", [(None, 6, None)]),
    ("2023年5月8日に何をした?", [(2023, 5, 8)]),
    ("五月的旅行 5月去了哪里", [(None, 5, None)]),
    ("2022年的计划", [(2022, None, None)]),
    ("2023년 5월 8일에 뭐 했지?", [(2023, 5, 8)]),
    ("Notizen vom 08.05.2023", [(2023, 5, 8)]),
])
def test_a_question_names_its_date_in_its_own_language(question: str, spans: list) -> None:
    """Obsidian is kept in every script: the date list reads a question's date in the
    month names of eight languages, CJK and Korean numerals, and day.month.year, not
    English alone."""
    assert date_spans(question) == spans


@pytest.mark.parametrize("question", [
    "What did the Mars rover find?", "¿Cuándo fuimos al mar?", "Passe-moi la mayo",
    "you may go", "Version 3.12.2023x"])
def test_a_month_name_that_is_an_everyday_word_names_no_date_alone(question: str) -> None:
    assert date_spans(question) == []


TODAY = date(2024, 3, 14)  # a Thursday


@pytest.mark.parametrize("question, days", [
    ("What did I write yesterday?", [(date(2024, 3, 13), date(2024, 3, 13))]),
    ("Was war gestern?", [(date(2024, 3, 13), date(2024, 3, 13))]),
    ("What did we plan last week?", [(date(2024, 3, 4), date(2024, 3, 10))]),
    ("Qu'ai-je lu la semaine dernière ?", [(date(2024, 3, 4), date(2024, 3, 10))]),
    ("Qu’ai-je noté aujourd’hui ?", [(TODAY, TODAY)]),
    ("上周去了哪里", [(date(2024, 3, 4), date(2024, 3, 10))]),
    ("지난주에 뭐 했지?", [(date(2024, 3, 4), date(2024, 3, 10))]),
    ("¿Qué hice el mes pasado?", [(date(2024, 2, 1), date(2024, 2, 29))]),
    ("Что было в прошлом году?", [(date(2023, 1, 1), date(2023, 12, 31))]),
    ("先月の旅行", [(date(2024, 2, 1), date(2024, 2, 29))]),
    ("notes from this week", [(date(2024, 3, 11), date(2024, 3, 14))]),
    ("Was habe ich hier notiert?", []),
    ("todays yesterdays", []),
])
def test_days_relative_to_today(question: str, days: list) -> None:
    assert relative_ranges(question, TODAY) == days


def test_a_day_note_counts_for_its_range_and_the_week_after() -> None:
    last_week = relative_ranges("last week", TODAY)
    assert within(date(2024, 3, 4), last_week) and within(date(2024, 3, 17), last_week)
    assert not within(date(2024, 3, 3), last_week)
    assert not within(date(2024, 3, 18), last_week)


def test_a_question_of_yesterday_brings_yesterdays_note(vault: Vault, indexes: Indexes) -> None:
    """A journal's owner asks "what did I cook yesterday?": yesterday's day note comes
    first, above days that say more about cooking."""
    write_note(vault.root, "daily/2024-03-13.md", "Cooked a lentil soup for the neighbours.\n")
    for day in ("02", "05", "08", "11"):
        write_note(vault.root, f"daily/2024-03-{day}.md",
                   "Cooked dinner again: cooking is my evening. I cooked rice and "
                   "cooked beans.\n")
    indexes.chunks.sync()
    query = "What did I cook yesterday?"
    indexes.chunks.today = lambda: TODAY
    assert indexes.chunks.search(query, 3)[0].path == "daily/2024-03-13.md"
    indexes.chunks.today = lambda: date(2024, 3, 12)  # yesterday is the 11th now
    assert indexes.chunks.search(query, 3)[0].path == "daily/2024-03-11.md"


def test_a_long_question_is_read_for_dates_as_far_as_it_is_embedded() -> None:
    """A caller's pasted page is no question: its dates past the embedded length are not
    scanned (a megabyte of "may " took 1.5 s)."""
    from vaultlink.index.fusion import MAX_QUERY_CHARS

    padding = "x" * MAX_QUERY_CHARS
    assert date_spans("in June " + padding) == [(None, 6, None)]
    assert date_spans(padding + " in June") == []
    assert relative_ranges(padding + " yesterday", TODAY) == []
