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

# Each language's twelve month names, January first, as a question writes them (Russian
# in the forms "в мае", "8 мая" and "май" take).
_NAMES = (
    "january february march april may june july august september october november december",
    "januar februar märz april mai juni juli august september oktober november dezember",
    "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre "
    "dicembre",
    "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "januari februari maart april mei juni juli augustus september oktober november december",
    "январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь",
    "января февраля марта апреля мая июня июля августа сентября октября ноября декабря",
    "январе феврале марте апреле мае июне июле августе сентябре октябре ноябре декабре",
)
_MONTHS = {name: n for names in _NAMES for n, name in enumerate(names.split(), start=1)}
_MONTHS.update({name: n for n, name in enumerate(
    "jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)})
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


def _num(text: str | None) -> int | None:
    return int(text) if text else None


def date_spans(query: str) -> list[DateSpan]:
    """The dates a question names, each as (year, month, day) with None for a part it
    leaves open: "in June", "on May 23, 2023", "1 February, 2023", "8. Mai 2023", "8 de
    mayo de 2023", "2023年5月8日", "5월", "08.05.2023", "2023-05-08", "in 2023"."""
    spans: list[DateSpan] = []
    for m in _DATE_WORDS.finditer(query):
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


def note_date(path: str) -> date | None:
    """The date in a note's path (``daily/2023-05-08.md``, ``daily/2023-05-08/x.md``)."""
    found = _PATH_DATE.findall(path)
    if not found:
        return None
    try:
        return date(*map(int, found[-1]))
    except ValueError:
        return None


def within(day: date, spans: Sequence[DateSpan], after: int = DAYS_AFTER) -> bool:
    """True when ``day`` falls in one of ``spans`` or up to ``after`` days past it (a
    span without its year: that year or the one before, as "last June")."""
    for year, month, dom in spans:
        for y in ([year] if year else [day.year, day.year - 1]):
            try:
                if month is None:
                    start, end = date(y, 1, 1), date(y, 12, 31)
                elif dom is None:
                    start = date(y, month, 1)
                    end = date(y, month, calendar.monthrange(y, month)[1])
                else:
                    start = end = date(y, month, dom)
            except ValueError:
                continue
            if start <= day <= end + timedelta(days=after):
                return True
    return False
