"""The Super 9 roulette promotion (rules sheet: ``shared/rules/super9-roulette-promotion.txt``).

Pure parts: :mod:`calendar` (rules 4-6), :mod:`tickets` (8, 9), :mod:`engine` (12, 13,
19), :mod:`settle` (14-16, 20), :mod:`settings`.  Stored and audited operator actions:
:class:`Super9Desk`.  Wheel feed to spins: :func:`follow_wheel`.
"""

from gateway.super9.calendar import SessionCalendar
from gateway.super9.desk import ClaimRegistered, SpinRecorded, Super9Desk
from gateway.super9.engine import DrawEngine, SpinOutcome
from gateway.super9.settings import RepeatRule, Super9Settings, WinningContribution
from gateway.super9.settle import ClaimFact, Settlement, SpinFact, settle
from gateway.super9.wheel import follow_wheel

__all__ = [
    "ClaimFact",
    "ClaimRegistered",
    "DrawEngine",
    "RepeatRule",
    "SessionCalendar",
    "Settlement",
    "SpinFact",
    "SpinOutcome",
    "SpinRecorded",
    "Super9Desk",
    "Super9Settings",
    "WinningContribution",
    "follow_wheel",
    "settle",
]
