"""What a heat may carry: its starting credits and its time, in ONE place.

A heat must be playable on every machine of a bank, so its limits are those of the
narrowest carrier, SAS long poll 8C (:mod:`protocols.sas.tournament_layout`): starting
credits in 4 BCD bytes (at most 99,999,999) and the time as MM:SS in one BCD byte each
(at most 99:59 = 5,999 s).  Both must be positive: a heat with no credits or no time
cannot be played (T12: every seat starts with the same credits).

The check runs where a heat is made (``gateway.tournament.services.setup.schedule_heat``),
where it is journaled and where it is run (``gateway.heats.runner``), so a heat the floor
cannot carry is refused with one line naming the limit, long before a machine is locked.
This is a leaf module: the tournament side may import it, it imports only the layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocols.sas.tournament_layout import CREDITS_WIDTH, MINUTES_WIDTH

SECONDS_PER_MINUTE = 60


def _bcd_max(width: int) -> int:
    return int(10 ** (2 * width)) - 1  # a negative power would be a float: mypy says Any


@dataclass(frozen=True, slots=True)
class HeatLimits:
    min_credits: int = 1
    max_credits: int = _bcd_max(CREDITS_WIDTH)  # 99,999,999: LP 8C credits, 4 BCD
    min_seconds: int = 1
    # 99:59: LP 8C minutes in 1 BCD byte, seconds 0..59
    max_seconds: int = _bcd_max(MINUTES_WIDTH) * SECONDS_PER_MINUTE + SECONDS_PER_MINUTE - 1


LIMITS = HeatLimits()


class HeatLimitError(ValueError):
    """A heat's credits or time outside :data:`LIMITS`; ``field`` names which."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def heat_limit_problem(credits: int, seconds: int, limits: HeatLimits = LIMITS) -> str | None:
    """One line naming the limit a heat breaks, or None if the floor can carry it."""
    error = _first_error(credits, seconds, limits)
    return str(error) if error is not None else None


def check_heat_limits(credits: int, seconds: int, limits: HeatLimits = LIMITS) -> None:
    """Raise :class:`HeatLimitError` unless a heat of ``credits`` and ``seconds`` fits."""
    error = _first_error(credits, seconds, limits)
    if error is not None:
        raise error


def _first_error(credits: int, seconds: int, limits: HeatLimits) -> HeatLimitError | None:
    if not _whole(credits) or not limits.min_credits <= credits <= limits.max_credits:
        return HeatLimitError(
            "credits",
            f"starting credits {_show(credits)} outside "
            f"{limits.min_credits:,}..{limits.max_credits:,} (SAS LP 8C: 4 BCD bytes)",
        )
    if not _whole(seconds) or not limits.min_seconds <= seconds <= limits.max_seconds:
        mm, ss = divmod(limits.max_seconds, SECONDS_PER_MINUTE)
        return HeatLimitError(
            "seconds",
            f"heat time {_show(seconds)} s outside {limits.min_seconds}..{limits.max_seconds:,} s"
            f" (SAS LP 8C: at most {mm}:{ss:02d})",
        )
    return None


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _show(value: object) -> str:
    return f"{value:,}" if _whole(value) else repr(value)
