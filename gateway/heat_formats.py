"""How a heat ends for each machine: the house formats F1–F5 (docs/rules.md#f1).

A **timed** heat (the venue's sheet, T12) ends for every machine at once, when its time
runs out.  A **games-limited** heat (F2) ends for a machine once its tournament
games-played meter (SAS LP 95, the board's tournament meters) reaches the heat's number
of games; a **credit-limited** heat (F3) once its tournament credits fall below the
minimum bet, so nothing is left to play.  In both, the heat closes when every machine
is done, or when its time runs out (the time stays the backstop, F4).

The format is a tournament setting (``TournamentSettings.heat_format``) and is copied
onto each heat run when it is journaled (``heat_run.format``, as its ``spec``), so a
settings change never alters a heat under way and a recovery reads the same limit (F5).
A leaf module: the tournament and the heats import it; it imports nothing of ours.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

MAX_GAMES = 10_000  # F2: a heat of more games than this is a typing error
MAX_MINIMUM_BET = 1_000  # F3: no machine's max bet goes near this many credits


class FormatKind(enum.Enum):
    TIMED = "timed"  # T12: the time alone ends the heat
    GAMES = "games-limited"  # F2
    CREDITS = "credit-limited"  # F3


class HeatFormatError(ValueError):
    """A format that cannot be: the message starts ``rule Fn:`` and names the field."""


@dataclass(frozen=True, slots=True)
class HeatFormat:
    kind: FormatKind = FormatKind.TIMED
    games: int | None = None  # F2: games per seat (only games-limited)
    minimum_bet: int = 1  # F3: a seat with fewer credits than this is done

    def __post_init__(self) -> None:
        problem = self.problem()
        if problem is not None:
            raise HeatFormatError(problem)

    def problem(self) -> str | None:
        """Why this format cannot be, in one line naming the field and the clause."""
        if self.kind is FormatKind.GAMES:
            if self.games is None:
                return "rule F2: a games-limited heat needs games_per_seat"
            if not 1 <= self.games <= MAX_GAMES:
                return f"rule F2: games_per_seat must be 1 to {MAX_GAMES}, got {self.games}"
        elif self.games is not None:
            return (
                f"rule F1: games_per_seat is only for a games-limited heat, not {self.kind.value}"
            )
        if not 1 <= self.minimum_bet <= MAX_MINIMUM_BET:
            return f"rule F3: minimum_bet must be 1 to {MAX_MINIMUM_BET}, got {self.minimum_bet}"
        return None

    @property
    def timed(self) -> bool:
        return self.kind is FormatKind.TIMED

    @property
    def counts_games(self) -> bool:
        return self.kind is FormatKind.GAMES

    def spec(self) -> str:
        """The journal's form: ``timed``, ``games-limited:30``, ``credit-limited:1``."""
        if self.kind is FormatKind.GAMES:
            return f"{self.kind.value}:{self.games}"
        if self.kind is FormatKind.CREDITS:
            return f"{self.kind.value}:{self.minimum_bet}"
        return str(self.kind.value)

    @classmethod
    def parse(cls, spec: str | None) -> HeatFormat:
        """The inverse of :meth:`spec`; None (a run journaled before formats) is timed."""
        if spec is None or spec == FormatKind.TIMED.value:
            return cls()
        name, _, number = spec.partition(":")
        try:
            kind = FormatKind(name)
            value = int(number)
        except ValueError:
            raise HeatFormatError(f"rule F1: unknown heat format {spec!r}") from None
        if kind is FormatKind.GAMES:
            return cls(kind, games=value)
        return cls(kind, minimum_bet=value)

    def seat_done(
        self, *, credits: int | None = None, games_played: int | None = None
    ) -> str | None:
        """Why a playing machine is done under this format (F2, F3), or None: it plays on.

        ``credits`` is the machine's tournament credit meter, ``games_played`` its
        tournament games-played meter; either may be unknown (None) on this reading."""
        games = self.games if self.kind is FormatKind.GAMES else None
        if games is not None and games_played is not None and games_played >= games:
            return f"rule F2: {games_played} of {games} games played"
        floor = self.minimum_bet
        if self.kind is FormatKind.CREDITS and credits is not None and credits < floor:
            return f"rule F3: {credits} credits left, under the minimum bet {floor}"
        return None


TIMED = HeatFormat()


def heat_format(
    kind: str, *, games_per_seat: int | None = None, minimum_bet: int = 1
) -> HeatFormat:
    """A format from the settings' words; one line naming the field if it cannot be."""
    try:
        parsed = FormatKind(kind)
    except ValueError:
        known = ", ".join(k.value for k in FormatKind)
        raise HeatFormatError(f"rule F1: format must be one of {known}, got {kind!r}") from None
    return HeatFormat(parsed, games=games_per_seat, minimum_bet=minimum_bet)


__all__ = ["TIMED", "FormatKind", "HeatFormat", "HeatFormatError", "heat_format"]
