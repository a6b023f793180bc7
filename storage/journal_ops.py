"""Journal writes as values: one frozen, typed op per kind of write.

A heat's journal is written through ops: :class:`StepOp` (a state change, with the seat
states and tournament effects committed with it), :class:`SeatsOp` (seat rows: states,
support, unlock proofs, baselines, effects) and :class:`ResultsOp` (a bank's scores).
Each op is written once, by whoever decides it, and then

* applied to the database as it is (:meth:`apply`, over :class:`~storage.journal.Journal`),
  or
* spooled as one JSON line while the database is away (:meth:`to_json`), and replayed
  later from that line (:func:`op_from_json`, then :meth:`apply`): the same op, so a
  spooled write can never differ from the direct one.

The JSON of each op is the outage spool's line format (``gateway.heats.spool``), unchanged
since the spool was introduced: a line written by an earlier gateway still decodes (keys
added later -- ``effects``, ``unlocked_at``, ``baselines`` -- default to empty), and so does
the ``settle`` line earlier versions spooled (:class:`SettleOp`, replay only).

Every op replays idempotently: a step already applied is not written twice, scores are
unique per (run, machine), effects per (run, key), and the first unlock proof and
baseline of a seat stand.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, ClassVar, Final

from storage.effects import EffectIn, EffectKind
from storage.journal import Journal, MachineState, NotSettled, ResultIn, RunState

Json = dict[str, Any]


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


def _set(op: object, name: str, value: object) -> None:
    object.__setattr__(op, name, value)  # a frozen dataclass normalising its own fields


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _dt(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _effect_json(e: EffectIn) -> Json:
    return {
        "kind": e.kind.value,
        "at": e.at.isoformat(),
        "machine_id": e.machine_id,
        "details": dict(e.details),
    }


def _effects(records: Sequence[Mapping[str, Any]] | None) -> tuple[EffectIn, ...]:
    return tuple(
        EffectIn(
            EffectKind(r["kind"]), datetime.fromisoformat(r["at"]), r["machine_id"], r["details"]
        )
        for r in records or ()
    )


def _seat_states(seats: Mapping[str, str]) -> dict[str, MachineState]:
    return {k: MachineState(v) for k, v in seats.items()}


@dataclass(frozen=True, slots=True)
class StepOp:
    """A state change of a run (journaled before the floor is touched): its clock, the
    seat states and the tournament effects committed with it (:meth:`Journal.step`)."""

    KIND: ClassVar[str] = "step"

    run_id: int
    state: RunState
    _: KW_ONLY
    note: str = ""
    started_at: datetime | None = None
    ends_at: datetime | None = None
    paused_left_ms: int | None = None
    clear_pause: bool = False
    seats: Mapping[str, MachineState] = field(default_factory=dict)
    effects: Sequence[EffectIn] = ()

    def __post_init__(self) -> None:
        _set(self, "seats", _frozen(self.seats))
        _set(self, "effects", tuple(self.effects))

    async def apply(self, journal: Journal) -> None:
        view = await journal.run(self.run_id)
        # Idempotent replay: a step already applied (same state, crash before the spool
        # was cleared) is not written twice (its effects were committed with it).
        if view.state is self.state and self.ends_at is None and not self.seats:
            return
        await journal.step(
            self.run_id,
            self.state,
            note=self.note,
            started_at=self.started_at,
            ends_at=self.ends_at,
            paused_left_ms=self.paused_left_ms,
            clear_pause=self.clear_pause,
            seats=self.seats,
            effects=self.effects,
        )

    def to_json(self) -> Json:
        return {
            "op": self.KIND,
            "run_id": self.run_id,
            "state": self.state.value,
            "note": self.note,
            "started_at": _iso(self.started_at),
            "ends_at": _iso(self.ends_at),
            "paused_left_ms": self.paused_left_ms,
            "clear_pause": self.clear_pause,
            "seats": {k: v.value for k, v in self.seats.items()},
            "effects": [_effect_json(e) for e in self.effects],
        }

    @classmethod
    def from_json(cls, r: Mapping[str, Any]) -> StepOp:
        return cls(
            r["run_id"],
            RunState(r["state"]),
            note=r["note"],
            started_at=_dt(r["started_at"]),
            ends_at=_dt(r["ends_at"]),
            paused_left_ms=r["paused_left_ms"],
            clear_pause=r["clear_pause"],
            seats=_seat_states(r["seats"]),
            effects=_effects(r.get("effects")),
        )


@dataclass(frozen=True, slots=True)
class SeatsOp:
    """Seat rows of a run: their states (a malfunction stays final, T20), how each is
    driven, when each acknowledged its unlock (T20's proof of play), its meters at entry,
    and the tournament effects committed with them (:meth:`Journal.set_seats`)."""

    KIND: ClassVar[str] = "seats"

    run_id: int
    seats: Mapping[str, MachineState]
    _: KW_ONLY
    supports: Mapping[str, str] = field(default_factory=dict)
    note: str = ""
    effects: Sequence[EffectIn] = ()
    unlocked_at: Mapping[str, datetime] = field(default_factory=dict)
    baselines: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _set(self, "seats", _frozen(self.seats))
        _set(self, "supports", _frozen(self.supports))
        _set(self, "effects", tuple(self.effects))
        _set(self, "unlocked_at", _frozen(self.unlocked_at))
        _set(self, "baselines", _frozen({k: _frozen(v) for k, v in self.baselines.items()}))

    async def apply(self, journal: Journal) -> None:
        await journal.set_seats(
            self.run_id,
            self.seats,
            supports=self.supports,
            note=self.note,
            effects=self.effects,
            unlocked_at=self.unlocked_at,
            baselines=self.baselines or None,
        )

    def to_json(self) -> Json:
        return {
            "op": self.KIND,
            "baselines": {k: dict(v) for k, v in self.baselines.items()},
            "run_id": self.run_id,
            "seats": {k: v.value for k, v in self.seats.items()},
            "supports": dict(self.supports),
            "note": self.note,
            "effects": [_effect_json(e) for e in self.effects],
            "unlocked_at": {k: v.isoformat() for k, v in self.unlocked_at.items()},
        }

    @classmethod
    def from_json(cls, r: Mapping[str, Any]) -> SeatsOp:
        return cls(
            r["run_id"],
            _seat_states(r["seats"]),
            supports=r["supports"],
            note=r["note"],
            effects=_effects(r.get("effects")),
            unlocked_at={k: datetime.fromisoformat(v) for k, v in r.get("unlocked_at", {}).items()},
            baselines=r.get("baselines") or {},
        )


@dataclass(frozen=True, slots=True)
class ResultsOp:
    """A bank's scores and raw meters, stored once per (run, machine) with the seats
    marked scored and the tournament's one scores effect (T12, :meth:`Journal.store_results`)."""

    KIND: ClassVar[str] = "results"

    run_id: int
    results: Sequence[ResultIn]

    def __post_init__(self) -> None:
        _set(self, "results", tuple(self.results))

    async def apply(self, journal: Journal) -> None:
        await journal.store_results(self.run_id, self.results)

    def to_json(self) -> Json:
        return {
            "op": self.KIND,
            "run_id": self.run_id,
            "results": [
                {
                    "machine_id": r.machine_id,
                    "score": r.score,
                    "games_played": r.games_played,
                    "games_won": r.games_won,
                    "credits_wagered": r.credits_wagered,
                    "credits_won": r.credits_won,
                    "collected_at": r.collected_at.isoformat(),
                }
                for r in self.results
            ],
        }

    @classmethod
    def from_json(cls, r: Mapping[str, Any]) -> ResultsOp:
        return cls(
            r["run_id"],
            [
                ResultIn(
                    machine_id=x["machine_id"],
                    score=x["score"],
                    games_played=x["games_played"],
                    games_won=x["games_won"],
                    credits_wagered=x["credits_wagered"],
                    credits_won=x["credits_won"],
                    collected_at=datetime.fromisoformat(x["collected_at"]),
                )
                for x in r["results"]
            ],
        )


@dataclass(frozen=True, slots=True)
class SettleOp:
    """A run's settling, as spooled by earlier versions only: replayed, never written
    (settling needs the database's answer, so it is never spooled now)."""

    KIND: ClassVar[str] = "settle"

    run_id: int

    async def apply(self, journal: Journal) -> None:
        with contextlib.suppress(NotSettled):
            await journal.settle(self.run_id)

    def to_json(self) -> Json:
        return {"op": self.KIND, "run_id": self.run_id}

    @classmethod
    def from_json(cls, r: Mapping[str, Any]) -> SettleOp:
        return cls(r["run_id"])


JournalOp = StepOp | SeatsOp | ResultsOp  # what the gateway writes
SpooledOp = JournalOp | SettleOp  # what a spool line may hold

_DECODERS: Final[Mapping[str, type[SpooledOp]]] = MappingProxyType(
    {cls.KIND: cls for cls in (StepOp, SeatsOp, ResultsOp, SettleOp)}
)


def op_from_json(r: Mapping[str, Any]) -> SpooledOp:
    """The op a spool line holds; ValueError for an unknown op or a line that is not one."""
    kind = r.get("op")
    decoder = _DECODERS.get(kind) if isinstance(kind, str) else None
    if decoder is None:
        raise ValueError(f"unknown journal operation {kind!r}")
    try:
        return decoder.from_json(r)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"journal operation {kind!r} is malformed: {exc!r}") from exc
