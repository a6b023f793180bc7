"""Super 9 desk: every operator action on the promotion, stored and audited.

One method per thing a person does at the cash desk, the Guest Relations desk or the
table (sell, hand in, void a spin, key a manual spin, register a claim, close ...).
Each runs in one transaction together with its audit row (``storage.audit``), validates
before it writes, and raises :class:`OperatorError` naming the rule when it refuses —
leaving nothing changed.  Time is passed in (``now``, time-zone aware) so scripted
sessions and tests drive the clock.

The sales side (settings, calendar, tickets) is :mod:`gateway.super9.desk.sales`, the
table side (spins, voids, claims, close, receipts) :mod:`gateway.super9.desk.draw`, and
what both share — look-ups, the jackpot, the live draw for displays —
:mod:`gateway.super9.desk.core`.
"""

from __future__ import annotations

from gateway.super9.desk.core import ClaimRegistered, SpinRecorded
from gateway.super9.desk.draw import DrawDesk
from gateway.super9.desk.sales import SalesDesk

__all__ = ["ClaimRegistered", "SpinRecorded", "Super9Desk"]


class Super9Desk(SalesDesk, DrawDesk):
    """Every operator action on the Super 9 promotion (see the module docstring)."""
