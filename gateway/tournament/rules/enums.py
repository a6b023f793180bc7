"""Vocabulary shared by the rules, the services, the CLI and storage.

One set of enums for the whole tournament: they live below the tables in
:mod:`storage.enums` (plain ``StrEnum`` definitions, no database) and are re-exported
here with the rule facts the tables do not need.
"""

from __future__ import annotations

from storage.enums import (
    CardSuit,
    DrawMethod,
    DrawnBy,
    EntryStatus,
    EntryValidity,
    ExclusionKind,
    HeatStatus,
    NoticeKind,
    PurchaseKind,
    ScoreSource,
    SeatStatus,
    Stage,
)

__all__ = [
    "IN_PROGRESS",
    "LIVE_SEAT_STATUSES",
    "CardSuit",
    "DrawMethod",
    "DrawnBy",
    "EntryStatus",
    "EntryValidity",
    "ExclusionKind",
    "HeatStatus",
    "NoticeKind",
    "PurchaseKind",
    "ScoreSource",
    "SeatStatus",
    "Stage",
    "exclusion_rule",
    "is_final_stage",
]

# A heat whose start has been announced and that has not ended (T11, T20, T22).
IN_PROGRESS = frozenset(
    {HeatStatus.ARMED, HeatStatus.RUNNING, HeatStatus.ENDING, HeatStatus.COLLECTING}
)
# Seats that still hold their machine, entry and player slot.
LIVE_SEAT_STATUSES = frozenset({SeatStatus.ASSIGNED, SeatStatus.PRESENT, SeatStatus.PLAYED})


def is_final_stage(stage: Stage) -> bool:
    """T16 and T21 speak of the "final stages": semi-finals and finals."""
    return stage is not Stage.QUALIFYING


def exclusion_rule(kind: ExclusionKind) -> int:
    """T3 bars staff and connected persons; T2 every other register."""
    return 3 if kind in (ExclusionKind.STAFF, ExclusionKind.CONNECTED_PERSON) else 2
