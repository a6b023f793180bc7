"""Prizes paid to the winner's machine, a house clause (docs/rules.md#p1 to #p7): pure rules.

Theory of operation
-------------------
Where the jurisdiction allows it (a venue setting, off until a director turns it on,
P1), a prize the desk would pay in cash — a tournament place (T15) or a hot-seat draw
(HS7) — may instead be paid as promotional credits loaded onto the winner's machine by
SAS AFT (LP 74 lock, LP 72 transfer).  The payout is the desk payout in every other way:
the cashier asks, a second account approves and is the witness, the winner signs, and
the cash-up shows it under the tender ``machine (AFT)`` (P2, P6).

The transfer is journaled before the machine hears of it (P4): the row carries the AFT
transaction ID the machine will see, on the first send and on every retry, so a machine
that already took it answers with its first outcome instead of crediting twice.  After
a crash the machine's own record of its last transfer (LP 72 interrogation) decides:
ours and done is paid, ours and refused is refused, not ours is sent again with the same
ID (P5).

This module holds the decisions as functions of facts passed in:
:func:`refusal` (P3: the machine must be idle, able to take AFT credits, not locked, not
in tournament mode, and the amount within its limit), :func:`verdict` (P4, P5: what a
transfer's reply or read-back means for the journal) and :func:`check_setting` (P1).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from gateway.tournament.rules.violations import RuleViolation

__all__ = [
    "MAX_EXPIRATION_DAYS",
    "MachineFacts",
    "Reading",
    "Verdict",
    "check_allowed",
    "check_setting",
    "refusal",
    "refuse",
    "verdict",
]

MAX_EXPIRATION_DAYS = 9999  # SAS expiration 0000NNNN: a number of days, four digits


def refuse(clause: str, message: str) -> RuleViolation:
    """A one-line refusal naming its clause: ``rule P3: …``."""
    return RuleViolation(None, f"rule {clause}: {message}")


def check_setting(allowed: bool, expiration_days: int, reason: str) -> None:
    """P1: the venue's decision is a yes or no with a reason, and the credits' life in
    days (1 to 9999, what SAS can carry)."""
    if not isinstance(allowed, bool):
        raise refuse("P1", "allowed must be true or false")
    if isinstance(expiration_days, bool) or not isinstance(expiration_days, int):
        raise refuse("P1", "expiration_days must be a whole number of days")
    if not 1 <= expiration_days <= MAX_EXPIRATION_DAYS:
        raise refuse("P1", f"expiration_days must be 1 to {MAX_EXPIRATION_DAYS}")
    if not reason.strip():
        raise refuse("P1", "a reason is required (the jurisdiction's terms)")


def check_allowed(allowed: bool | None) -> None:
    """P1: no decision, or a decision against, refuses every prize to a machine."""
    if not allowed:
        raise refuse(
            "P1",
            "prizes to the machine are not allowed at this venue "
            "(tournament prizes machine-setting --allow, where the jurisdiction permits)",
        )


@dataclass(frozen=True, slots=True)
class MachineFacts:
    """What the gateway and the machine say of a machine just before a transfer.

    ``aft`` the machine takes AFT transfers from us (capable and registered to our host);
    ``in_tournament`` it is seated in a heat or walk-up session that has not ended;
    ``locked`` transfers to it are not possible now (the machine's LP 74 says so: play
    disabled, tournament mode, a tilt, an open door), or a technician excluded it;
    ``busy`` a game is in progress or a cash-out or another transfer is under way;
    ``limit_cents`` the machine's AFT transfer limit (None: it reports none);
    ``why_not_aft`` the reason it cannot take AFT, if known."""

    machine_id: str
    aft: bool
    in_tournament: bool
    locked: bool
    busy: bool
    limit_cents: int | None = None
    why_not_aft: str | None = None


def refusal(facts: MachineFacts, amount_cents: int) -> str | None:
    """P3: the one-line reason this machine may not be paid ``amount_cents`` now, or None.

    Checked in this order, so the line names what the attendant must fix first."""
    m = facts.machine_id
    if not facts.aft:
        why = f" ({facts.why_not_aft})" if facts.why_not_aft else ""
        return f"rule P3: machine {m} cannot take AFT credits{why}"
    if facts.in_tournament:
        return f"rule P3: machine {m} is in tournament mode or seated in a heat"
    if facts.locked:
        return f"rule P3: machine {m} is locked (transfers to it are not possible now)"
    if facts.busy:
        return f"rule P3: machine {m} is not idle (a game or a transfer is under way)"
    if facts.limit_cents is not None and amount_cents > facts.limit_cents:
        return (
            f"rule P3: {amount_cents} cents is over machine {m}'s transfer limit "
            f"of {facts.limit_cents} cents"
        )
    return None


class Reading(enum.Enum):
    """What a machine said of a transfer (a reply, or its last transfer read back)."""

    DONE = "done"  # this transaction ID, fully transferred
    REFUSED = "refused"  # this transaction ID, refused: nothing moved
    PENDING = "pending"  # this transaction ID, not final yet
    NOT_SEEN = "not seen"  # the machine's last transfer is another (or none)
    DUPLICATE = "duplicate"  # the machine says this ID is already in its history
    ODD = "odd"  # this transaction ID, done, but not for the amount sent (partial)


class Verdict(enum.Enum):
    """What the journal does with a reading (P4, P5)."""

    PAID = "done"  # the payout is recorded, tender machine (AFT)
    REFUSED = "refused"  # nothing moved: the prize stays unpaid and may be paid again
    SEND = "send"  # send it (again) with the same transaction ID
    WAIT = "wait"  # ask the machine again later
    UNKNOWN = "unknown"  # a person must look at the machine's AFT history


def verdict(reading: Reading, *, sends: int, max_sends: int = 3) -> Verdict:
    """P5: a reply or a read-back of a journaled transfer, after ``sends`` sends of it.

    A transfer never sent is sent.  One the machine has not seen is sent again with its
    own ID while tries are left, and then left for a person (``unknown``): a machine
    that keeps not seeing it is not a machine to keep crediting blind.  A duplicate ID
    means the machine holds it in a history older than its last transfer: the money may
    have moved, so a person decides (never paid twice, never called refused)."""
    if reading is Reading.DONE:
        return Verdict.PAID
    if reading is Reading.REFUSED:
        return Verdict.REFUSED
    if reading is Reading.PENDING:
        return Verdict.WAIT
    if reading in (Reading.DUPLICATE, Reading.ODD):
        return Verdict.UNKNOWN
    return Verdict.SEND if sends < max_sends else Verdict.UNKNOWN
