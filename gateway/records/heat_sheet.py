"""The printable A4 heat sheet: the HTML of a heat export (``templates/heat_sheet.html``).

The sheet reads only the signed document's body (:mod:`.heat_export`), so it shows
nothing the record does not hold.  These helpers shape that body for the template: short
venue times, each seat's marks, the manual scores and amendments with the second person
who approved each, and the decisions with theirs.

Marks: **M** a score keyed by hand (rule 23: ``score.source`` is ``manual`` or the seat
has manual scores); **A** amended after a sealed cut — read from an ``amendments`` list
on the seat or an ``amended`` flag on its score, whichever the record carries (the
template is ready before the record has them); **DQ** a disqualification touching it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def when(value: Any) -> str:
    """An ISO time as ``YYYY-MM-DD HH:MM`` (venue time, as the record wrote it)."""
    if not isinstance(value, str) or len(value) < 16 or value[10] != "T":
        return "—" if value is None else str(value)
    return f"{value[:10]} {value[11:16]}"


def minutes(seconds: Any) -> str:
    if not isinstance(seconds, int):
        return "—"
    whole, rest = divmod(seconds, 60)
    return f"{whole} min" + (f" {rest} s" if rest else "")


def _amendments(seat: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = seat.get("amendments") or []
    return [a for a in found if isinstance(a, Mapping)]


def marks(seat: Mapping[str, Any]) -> list[str]:
    score = seat.get("score") or {}
    out = []
    if score.get("source") == "manual" or seat.get("manual_scores"):
        out.append("M")
    if score.get("amended") or _amendments(seat):
        out.append("A")
    if seat.get("disqualifications"):
        out.append("DQ")
    return out


def second_person(details: Any) -> str | None:
    """The account that approved a dual-control action, as its audit row names it."""
    if not isinstance(details, Mapping):
        return None
    second = details.get("second_person")
    if isinstance(second, Mapping) and second.get("account"):
        return str(second["account"])
    found = details.get("approved_by") or details.get("witness")
    return str(found) if found else None


def decision_rows(decisions: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "at": d.get("at"),
            "action": d.get("action"),
            "actor": d.get("actor"),
            "second": second_person(d.get("details")),
            "reason": d.get("reason"),
        }
        for d in decisions
    ]


def manual_rows(seats: list[Mapping[str, Any]], decisions: list[Mapping[str, Any]]) -> list[Any]:
    """Every manual score (M) and amendment (A), by seat, with who approved it."""
    approvals = {d.get("audit_id"): second_person(d.get("details")) for d in decisions}
    rows = []
    for seat in seats:
        for m in seat.get("manual_scores") or []:
            rows.append(
                {
                    "seat": seat.get("seat_number"),
                    "mark": "M",
                    "credits": m.get("credits"),
                    "replaced": _replaced(m.get("replaced")),
                    "by": m.get("by"),
                    "approved_by": approvals.get(m.get("audit_id")),
                    "at": m.get("at"),
                    "reason": m.get("reason"),
                }
            )
        for a in _amendments(seat):
            rows.append(
                {
                    "seat": seat.get("seat_number"),
                    "mark": "A",
                    "credits": a.get("credits"),
                    "replaced": _replaced(a.get("replaced")),
                    "by": a.get("by"),
                    "approved_by": a.get("approved_by"),
                    "at": a.get("at"),
                    "reason": a.get("reason"),
                }
            )
    return rows


def _replaced(value: Any) -> Any:
    """What a manual score replaced: its credits when the record kept the whole score."""
    if isinstance(value, Mapping):
        return value.get("final_credits", value.get("credits"))
    return value


def dq_rows(seats: list[Mapping[str, Any]]) -> list[tuple[Any, Mapping[str, Any]]]:
    return [(s.get("seat_number"), d) for s in seats for d in s.get("disqualifications") or []]
