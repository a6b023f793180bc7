"""The live draw as displays see it, kept in step with the stored spins.

:class:`LiveDraw` wraps a :class:`DrawEngine` and follows the session's list of valid
spins: new spins are applied incrementally (the fast path, one per wheel result); if the
list is no longer an extension of what was applied — a spin voided after its result
(S9-18.2) — the engine is rebuilt from the tickets and replayed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gateway.feed import FeedPublisher
from gateway.super9.rules.engine import DrawEngine, SpinOutcome
from gateway.super9.rules.settings import RepeatRule, Super9Settings

NEAR_COMPLETE_SHOWN = 20  # tickets listed on the display
COMPLETED_SHOWN = 50  # completed tickets listed (the count is always given)
JACKPOT_TOPIC = "super9/jackpot"  # retained: the progressive jackpot for signage


def draw_topic(session_id: int) -> str:
    return f"super9/{session_id}/draw"


@dataclass(frozen=True, slots=True)
class LiveSpin:
    seq: int
    number: int
    game_no: int | None


class LiveDraw:
    def __init__(
        self,
        tickets: Mapping[int, Iterable[int]],
        serials: Mapping[int, str],
        settings: Super9Settings,
    ) -> None:
        self._tickets = {k: tuple(v) for k, v in tickets.items()}
        self._serials = dict(serials)
        self._settings = settings
        self._removed: set[int] = set()
        self._reset()

    def _reset(self) -> None:
        self.engine: DrawEngine[int] = DrawEngine(self._tickets)
        for key in self._removed:
            self.engine.remove(key)
        self.applied: list[LiveSpin] = []
        self.counted_at: dict[int, int] = {}  # ticket -> counted spins at completion
        self._completed_by_seq: dict[int, tuple[int, ...]] = {}  # spin seq -> tickets

    def completed_at(self, seq: int) -> tuple[int, ...]:
        """Tickets still in play whose ninth number spin ``seq`` called (S9-13)."""
        return tuple(k for k in self._completed_by_seq.get(seq, ()) if k not in self._removed)

    def serial(self, ticket: int) -> str:
        return self._serials[ticket]

    def counted(self) -> int:
        """Spins counting toward the jackpot window (S9-19 setting)."""
        if self._settings.repeat_rule is RepeatRule.DISREGARD_REPEATS:
            return len(self.engine.called)
        return self.engine.spins

    def remove(self, ticket: int) -> None:
        """A ticket disqualified during the draw (S9-9, S9-21); play continues."""
        if ticket in self._tickets and ticket not in self._removed:
            self._removed.add(ticket)
            self.engine.remove(ticket)
            self.counted_at.pop(ticket, None)

    def sync(self, valid: Sequence[LiveSpin]) -> list[SpinOutcome[int]]:
        """Bring the engine to ``valid`` (the session's valid spins, in order)."""
        if valid[: len(self.applied)] != self.applied:
            self._reset()  # a spin was voided after the fact: replay
        outcomes = []
        for spin in valid[len(self.applied) :]:
            outcome = self.engine.call(spin.number)
            if outcome.completed:
                self.counted_at.update(dict.fromkeys(outcome.completed, self.counted()))
                self._completed_by_seq[spin.seq] = outcome.completed
            self.applied.append(spin)
            outcomes.append(outcome)
        return outcomes

    def payload(
        self,
        *,
        session_id: int,
        status: str,
        jackpot_cents: int,
        voided_games: Sequence[int | None] = (),
    ) -> dict[str, Any]:
        engine = self.engine
        counted = self.counted()
        last = self.applied[-1] if self.applied else None
        # The first completions, by spin then ticket: only the groups shown are sorted.
        completed: list[tuple[int, int]] = []
        for spin, group in engine.completion_groups():
            completed += ((k, spin) for k in sorted(group))
            if len(completed) >= COMPLETED_SHOWN:
                break
        return {
            "session": session_id,
            "status": status,
            "called": engine.called,
            "spins": engine.spins,
            "counted_spins": counted,
            "jackpot_spins": self._settings.jackpot_spins,
            "jackpot_live": counted < self._settings.jackpot_spins,
            "jackpot_cents": jackpot_cents,
            "last": None if last is None else {"number": last.number, "game": last.game_no},
            "voided_games": [g for g in voided_games if g is not None],
            "completed_count": engine.completed_count,
            "completed": [
                {"ticket": self._serials[k], "spin": s, "counted": self.counted_at.get(k)}
                for k, s in completed[:COMPLETED_SHOWN]
            ],
            "near_complete": [
                {"ticket": self._serials[k], "to_go": left}
                for k, left in engine.near_complete(NEAR_COMPLETE_SHOWN)
            ],
        }


async def publish(
    feed: FeedPublisher | None,
    session_id: int,
    payload: dict[str, Any],
    *,
    next_session: datetime | None = None,
) -> None:
    """The draw, and the jackpot with the next session for signs between draws."""
    if feed is not None:
        await feed.publish(draw_topic(session_id), payload, retain=True)
        await feed.publish(
            JACKPOT_TOPIC,
            {
                "jackpot_cents": payload["jackpot_cents"],
                "session": session_id,
                "next_session": None if next_session is None else next_session.isoformat(),
            },
            retain=True,
        )
