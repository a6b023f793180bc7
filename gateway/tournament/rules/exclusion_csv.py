"""Exclusion registers from CSV (T2–T3).

Columns (header row required, order free, unknown columns refused)::

    kind,id_number,name,valid_from,valid_until,note

``kind`` is an :class:`ExclusionKind` value (``self-exclusion``, ``refusal-of-entry``,
``excluded-category``, ``staff``, ``connected-person``).  ``valid_from`` / ``valid_until``
are ISO dates (venue-local days) or ISO date-times with an offset; a ``valid_until``
*date* is the last excluded day (inclusive), a date-time is the exclusive end; empty =
indefinite.  The whole file is checked before anything is used: one bad line refuses the
import, and every problem names its line.

Clauses: docs/rules.md#t2, #t3.
"""

from __future__ import annotations

import csv
import io
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from gateway.tournament.rules.eligibility import ExclusionRecord, normalise_id
from gateway.tournament.rules.enums import ExclusionKind
from gateway.tournament.rules.violations import RuleViolation

COLUMNS = ("kind", "id_number", "name", "valid_from", "valid_until", "note")
REQUIRED = ("kind", "id_number", "valid_from")


class ExclusionCsvError(RuleViolation):
    """The file was refused; ``problems`` lists (line number, message) for every bad line."""

    def __init__(self, problems: list[tuple[int, str]]) -> None:
        self.problems = problems
        super().__init__(2, listed("exclusion CSV", [(f"line {n}", m) for n, m in problems]))


SHOWN = 20  # problems named in one refusal; a file worse than that is the wrong file


def listed(what: str, problems: list[tuple[str, str]]) -> str:
    """One line naming every problem (up to :data:`SHOWN`): the desk fixes them all in
    one go instead of meeting them one at a time ("and 1 more" named none of them)."""
    if len(problems) == 1:
        where, message = problems[0]
        return f"{what} {where}: {message}".lstrip()
    named = "; ".join(f"{where}: {message}" for where, message in problems[:SHOWN])
    rest = f"; {len(problems) - SHOWN} more not shown" if len(problems) > SHOWN else ""
    head = f"{what}: " if what else ""
    return f"{head}{len(problems)} problems, nothing imported: {named}{rest}"


def parse_exclusion_csv(text: str, zone: ZoneInfo) -> list[ExclusionRecord]:
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise ExclusionCsvError([(1, "empty file, expected a header row")]) from None
    missing = [c for c in REQUIRED if c not in header]
    extra = [c for c in header if c not in COLUMNS]
    if missing or extra or len(set(header)) != len(header):
        what = (
            f"missing column {missing[0]!r}"
            if missing
            else f"unknown column {extra[0]!r}"
            if extra
            else "a column appears twice"
        )
        raise ExclusionCsvError([(1, f"{what}; expected {','.join(COLUMNS)}")])
    problems: list[tuple[int, str]] = []
    records: list[ExclusionRecord] = []
    seen: dict[tuple[str, ExclusionKind, datetime], int] = {}
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue  # blank line
        if len(row) != len(header):
            problems.append((line, f"{len(row)} fields, header has {len(header)}"))
            continue
        values = {k: v.strip() for k, v in zip(header, row, strict=True)}
        try:
            record = _record(values, zone)
        except ValueError as exc:
            problems.append((line, str(exc)))
            continue
        key = (normalise_id(record.id_number), record.kind, record.valid_from)
        if key in seen:
            problems.append((line, f"duplicate of line {seen[key]}"))
            continue
        seen[key] = line
        records.append(record)
    if problems:
        raise ExclusionCsvError(problems)
    return records


def _record(values: dict[str, str], zone: ZoneInfo) -> ExclusionRecord:
    raw_kind = values.get("kind", "")
    try:
        kind = ExclusionKind(raw_kind)
    except ValueError:
        allowed = ", ".join(k.value for k in ExclusionKind)
        raise ValueError(f"kind {raw_kind!r} is not one of {allowed}") from None
    id_number = values.get("id_number", "")
    if not normalise_id(id_number):
        raise ValueError("id_number is empty")
    if len(id_number) > 32:
        raise ValueError("id_number is longer than 32 characters")
    start = _instant(values.get("valid_from", ""), zone, "valid_from", end=False)
    if start is None:
        raise ValueError("valid_from is empty")
    until = _instant(values.get("valid_until", ""), zone, "valid_until", end=True)
    if until is not None and until <= start:
        raise ValueError("valid_until is not after valid_from")
    return ExclusionRecord(
        kind=kind,
        id_number=id_number,
        name=values.get("name", ""),
        valid_from=start,
        valid_until=until,
        note=values.get("note", ""),
    )


def _instant(raw: str, zone: ZoneInfo, column: str, *, end: bool) -> datetime | None:
    if not raw:
        return None
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            if end:  # the last excluded day, inclusive
                day += timedelta(days=1)
            return datetime(day.year, day.month, day.day, tzinfo=zone)
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError(f"{column} {raw!r} is not a date (YYYY-MM-DD) or date-time") from None
    if moment.tzinfo is None:
        raise ValueError(f"{column} {raw!r} needs a UTC offset (e.g. +02:00)")
    return moment
