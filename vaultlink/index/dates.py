"""Dates a question names, against the dates of day notes: a ranked list for ``search``.

"When did we go camping in June?", "Was hat Anna am 8. Mai 2023 gesagt?", "2023年5月の旅行":
each date becomes a span (year, month, day; None for a part it leaves open), and a day note
whose path holds a date in a span (or up to ``DAYS_AFTER`` days after it) ranks in the
date list. Month names in the languages vaultlink's users write most (English, German,
French, Spanish, Italian, Portuguese, Dutch, Russian), the year-month-day numerals of
Chinese, Japanese and Korean, ISO and day.month.year dates. Pure functions.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from datetime import date, timedelta

# a question is read for dates as far as it is embedded: a pasted page costs no scan
from vaultlink.index.fusion import MAX_QUERY_CHARS
from vaultlink.markdown.names import MONTHS as _MONTHS

# Month names that are everyday words too (Mars, "mayo", the sea "mar", Rio de Janeiro): a month
# only beside a day or a year. English "may" is one when capitalised, too ("in May"),
# but not as a question's first word.
_NEEDS_DAY = {"mars", "mayo", "mar", "janeiro"}
_DAY = r"(\d{1,2})(?:st|nd|rd|th|\.)?"
_DATE_WORDS = re.compile(
    rf"\b(?:{_DAY}\s+(?:de\s+)?)?("
    + "|".join(sorted(map(re.escape, _MONTHS), key=len, reverse=True))
    + rf")\.?(?:\s+{_DAY})?(?:,?\s+(?:de\s+|del\s+)?(\d{{4}}))?\b"
    r"|\b(\d{4})-(\d\d)-(\d\d)\b"
    r"|\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b"
    r"|(?:(\d{4})\s*[年년]\s*)?(\d{1,2})\s*[月월](?:\s*(\d{1,2})\s*[日일号號])?"
    r"|(\d{4})\s*[年년]"
    r"|\b((?:19|20)\d\d)\b", re.IGNORECASE)
_PATH_DATE = re.compile(r"(?<!\d)(\d{4})-(\d\d)-(\d\d)(?!\d)")
# A day note tells of the days before it ("we went camping last week"): a note up to
# this many days after the named span counts as of it (figures: docs/quality.md).
DAYS_AFTER = 7
# The date list's weight beside the fused list's 1 (chosen on LoCoMo's tuning half).
DATE_WEIGHT = 0.5

DateSpan = tuple[int | None, int | None, int | None]  # year, month, day; None: any
DayRange = tuple[date, date]  # first and last day, from a date relative to today

# Days relative to today a question names, by what they name; phrases in the languages of
# the month names above (lower case; a CJK phrase needs no spaces around it). French
# "hier" is left out: it is German and Dutch for "here".
_RELATIVE = {
    "today": "today heute aujourd'hui hoy oggi hoje vandaag сегодня 今天 今日 오늘",
    "yesterday": "yesterday gestern ayer ieri ontem gisteren вчера 昨天 昨日 어제",
    "this week": "this week|diese woche|cette semaine|esta semana|questa settimana|deze week"
                 "|на этой неделе|这周|本周|今週|이번 주",
    "last week": "last week|letzte woche|vergangene woche|la semaine dernière|la semana "
                 "pasada|la settimana scorsa|semana passada|vorige week|afgelopen week"
                 "|на прошлой неделе|上周|上个星期|先週|지난주|지난 주",
    "this month": "this month|diesen monat|ce mois-ci|este mes|questo mese|este mês"
                  "|deze maand|в этом месяце|这个月|本月|今月|이번 달",
    "last month": "last month|letzten monat|vergangenen monat|le mois dernier|el mes pasado"
                  "|il mese scorso|mês passado|vorige maand|в прошлом месяце|上个月|先月"
                  "|지난달|지난 달",
    "this year": "this year|dieses jahr|cette année|este año|quest'anno|este ano|dit jaar"
                 "|в этом году|今年|올해",
    "last year": "last year|letztes jahr|l'année dernière|el año pasado|l'anno scorso"
                 "|ano passado|vorig jaar|в прошлом году|去年|昨年|작년",
}
_PHRASES = {phrase: kind for kind, text in _RELATIVE.items()
            for phrase in (text.split("|") if "|" in text else text.split())}
# A CJK or Hangul phrase is matched inside a run of its script ("지난주에", "上周去"); any
# other as whole words ("today", not "todays").
_RELATIVE_WORDS = re.compile("|".join(
    re.escape(p) if p[0] >= "\u3000" else rf"(?<!\w){re.escape(p)}(?!\w)"
    for p in sorted(_PHRASES, key=len, reverse=True)), re.IGNORECASE)


def _num(text: str | None) -> int | None:
    return int(text) if text else None


def date_spans(query: str) -> list[DateSpan]:
    """The dates a question names, each as (year, month, day) with None for a part it
    leaves open: "in June", "on May 23, 2023", "1 February, 2023", "8. Mai 2023", "8 de
    mayo de 2023", "2023年5月8日", "5월", "08.05.2023", "2023-05-08", "in 2023"."""
    spans: list[DateSpan] = []
    for m in _DATE_WORDS.finditer(query[:MAX_QUERY_CHARS]):
        (d1, month, d2, year, iy, im, iday, dd, dm, dy, cy, cm, cd, cy_only,
         only_year) = m.groups()
        if month:
            low, day = month.lower(), d1 or d2
            if not (day or year) and (low in _NEEDS_DAY or (low == "may" and not (
                    m.group(0)[0].isupper() and query[:m.start()].strip()))):
                continue  # "you may", "May I ask...": no month
            spans.append((_num(year), _MONTHS[low], _num(day)))
        elif iy:
            spans.append((int(iy), int(im), int(iday)))
        elif dy:
            spans.append((int(dy), int(dm), int(dd)))
        elif cm:
            spans.append((_num(cy), int(cm), _num(cd)))
        elif cy_only or only_year:
            spans.append((int(cy_only or only_year), None, None))
    return [s for s in spans if s[1] is None or 1 <= s[1] <= 12]


def relative_ranges(query: str, today: date) -> list[DayRange]:
    """The days a question names relative to ``today`` ("yesterday", "last week",
    "letzten Monat", "去年"), each as its first and last day; a week starts on Monday."""
    monday = today - timedelta(days=today.weekday())
    first_of_month = today.replace(day=1)
    last_month_end = first_of_month - timedelta(days=1)
    yesterday = today - timedelta(days=1)
    days: dict[str, DayRange] = {
        "today": (today, today),
        "yesterday": (yesterday, yesterday),
        "this week": (monday, today),
        "last week": (monday - timedelta(days=7), monday - timedelta(days=1)),
        "this month": (first_of_month, today),
        "last month": (last_month_end.replace(day=1), last_month_end),
        "this year": (date(today.year, 1, 1), today),
        "last year": (date(today.year - 1, 1, 1), date(today.year - 1, 12, 31)),
    }
    return [days[_PHRASES[m.group(0).lower()]]
            for m in _RELATIVE_WORDS.finditer(
                query[:MAX_QUERY_CHARS].replace("’", "'"))]  # aujourd’hui


def note_date(path: str) -> date | None:
    """The date in a note's path (``daily/2023-05-08.md``, ``daily/2023-05-08/x.md``)."""
    found = _PATH_DATE.findall(path)
    if not found:
        return None
    try:
        return date(*map(int, found[-1]))
    except ValueError:
        return None


def within(day: date, spans: Sequence[DateSpan | DayRange], after: int = DAYS_AFTER) -> bool:
    """True when ``day`` falls in one of ``spans`` or up to ``after`` days past it."""
    late = timedelta(days=after)
    return any(first <= day <= last + late
               for span in spans for first, last in _ranges(span, day.year))


def _ranges(span: DateSpan | DayRange, year: int) -> list[DayRange]:
    """The days ``span`` may stand for in a note of ``year``: a span without its year is
    of that year or the one before ("last June")."""
    if len(span) == 2:
        return [span]
    named, month, dom = span
    out: list[DayRange] = []
    for y in ([named] if named else [year, year - 1]):
        try:
            if month is None:
                out.append((date(y, 1, 1), date(y, 12, 31)))
            elif dom is None:
                out.append((date(y, month, 1), date(y, month, calendar.monthrange(y, month)[1])))
            else:
                out.append((date(y, month, dom), date(y, month, dom)))
        except ValueError:
            continue  # the 31st of a short month, a day 40
    return out
