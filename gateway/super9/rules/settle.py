"""Who won a Super 9 session and what everyone is paid — pure, to the cent.

Inputs are the session's facts (tickets in play, spins in order with their voids,
claims with the spin they were registered at) and the progressive jackpot carried in.
The result is replayed from those facts alone, so a void after the fact (S9-18.2) or a
restart gives the same answer.

Money (all integer cents):

* buy-ins ``B``; consolation pool ``C = floor(B × 25 / 100)`` (S9-16); jackpot
  contribution ``J = B − C`` (S9-15's 75%, plus the odd cents of the floor).
* Jackpot not won: carry-out = carry-in + ``J``.
* Jackpot won (S9-14): the pot is carry-in (+ ``J`` if ``PAID_WITH_JACKPOT``); the
  jackpot restarts at the seed, which the house adds.  By default (``RESTART_AT_SEED``)
  the winning session adds nothing: the house keeps ``J`` and the next jackpot is
  exactly the seed; ``SEEDS_NEXT`` adds ``J`` to the restarted jackpot instead.
* Consolation (S9-16): the first ticket(s) to complete.  When the jackpot winner does
  not also take it, it goes to the first ticket(s) to complete *after* the jackpot
  window (S9-16: "after the 18th spin"), counted as the window is (S9-19).
* Equal shares (S9-20): each of ``n`` winners gets ``floor(prize / n)``; the
  remainder (< n cents) and a consolation nobody won are *leftovers*, routed by the
  ``leftovers`` setting: into the jackpot carry (default; kept by the house in a session
  that restarts the jackpot at the seed), or kept by the house.

Invariant (tested with Hypothesis): seeds added + buy-ins = prizes paid + carry-out −
carry-in + retained by the house, for every session.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from gateway.super9.rules.engine import DrawEngine
from gateway.super9.rules.settings import (
    Leftovers,
    RepeatRule,
    Super9Settings,
    WinningContribution,
)

K = TypeVar("K", bound=Hashable)

CONSOLATION_PERCENT = 25  # S9-16
JACKPOT_PERCENT = 100 - CONSOLATION_PERCENT  # S9-15


class PrizeKind(enum.Enum):
    JACKPOT = "jackpot"
    CONSOLATION = "consolation"


class ClaimVerdict(enum.Enum):
    WINNER = "winner"  # completed, claimed in time, earliest
    BEATEN = "beaten"  # valid but someone completed at an earlier spin (S9-13)
    LATE = "late"  # claimed after the claim window (S9-22)
    NOT_COMPLETE = "not-complete"  # not all nine numbers called by the claim
    INVALID = "invalid"  # duplicate mismatch or disqualified ticket (S9-9)


@dataclass(frozen=True, slots=True)
class SpinFact:
    seq: int  # order of arrival, voided spins included
    number: int | None  # None while a void-before-result waits for its number
    voided: bool


@dataclass(frozen=True, slots=True)
class ClaimFact(Generic[K]):
    ticket: K
    at_seq: int  # last spin seq recorded when the claim was registered
    valid: bool  # duplicate matched the top copy (S9-9)


@dataclass(frozen=True, slots=True)
class Payout(Generic[K]):
    ticket: K
    kind: PrizeKind
    amount_cents: int


@dataclass(frozen=True)
class Settlement(Generic[K]):
    buy_ins_cents: int
    consolation_pool_cents: int
    contribution_cents: int
    jackpot_in_cents: int
    jackpot_won: bool
    jackpot_pot_cents: int  # what the jackpot winners shared (0 if not won)
    seed_added_cents: int  # new money the house put in to restart the jackpot
    remainder_cents: int  # odd cents of equal shares (S9-20)
    unwon_consolation_cents: int
    jackpot_out_cents: int
    retained_cents: int  # kept by the house: see ``WinningContribution``, ``Leftovers``
    payouts: tuple[Payout[K], ...]
    verdicts: dict[K, ClaimVerdict] = field(default_factory=dict)
    completed_at: dict[K, int] = field(default_factory=dict)  # ticket -> valid spin
    valid_spins: int = 0

    @property
    def paid_cents(self) -> int:
        return sum(p.amount_cents for p in self.payouts)


def leftovers_to_house(settings: Super9Settings, *, jackpot_won: bool) -> bool:
    """Whether a session's odd cents and unwon consolation are kept by the house."""
    restarted = jackpot_won and settings.winning_contribution is WinningContribution.RESTART_AT_SEED
    return settings.leftovers is Leftovers.HOUSE or restarted


def _split(prize: int, winners: Sequence[K], kind: PrizeKind) -> tuple[list[Payout[K]], int]:
    """Equal shares (S9-20); returns the payouts and the odd cents left over."""
    if not winners:
        return [], prize
    share, rest = divmod(prize, len(winners))
    return [Payout(w, kind, share) for w in winners], rest


@dataclass(frozen=True)
class _Replay(Generic[K]):
    engine: DrawEngine[K]
    completion_seq: dict[K, int]  # ticket -> seq of the spin that completed it
    completion_counted: dict[K, int]  # ticket -> counted spin (S9-19) of completion
    valid_seqs: list[int]


def _replay(
    tickets: Mapping[K, Iterable[int]],
    spins: Iterable[SpinFact],
    settings: Super9Settings,
    out_of_play: set[K],
) -> _Replay[K]:
    """Replay the valid spins (S9-18.2: a voided spin never calls its number)."""
    engine: DrawEngine[K] = DrawEngine({k: v for k, v in tickets.items() if k not in out_of_play})
    replay = _Replay(engine, {}, {}, [])
    for spin in sorted(spins, key=lambda s: s.seq):
        if spin.voided or spin.number is None:
            continue
        outcome = engine.call(spin.number)
        replay.valid_seqs.append(spin.seq)
        counted = (
            outcome.distinct
            if settings.repeat_rule is RepeatRule.DISREGARD_REPEATS  # S9-19
            else outcome.spin
        )
        for key in outcome.completed:
            replay.completion_seq[key] = spin.seq
            replay.completion_counted[key] = counted
    return replay


def _judge(
    claims: Iterable[ClaimFact[K]],
    replay: _Replay[K],
    settings: Super9Settings,
    out_of_play: set[K],
) -> tuple[dict[K, ClaimVerdict], list[K]]:
    """Each claim's verdict, and the tickets validly claimed in time (S9-9, S9-13, S9-22)."""
    verdicts: dict[K, ClaimVerdict] = {}
    good: list[K] = []
    for claim in sorted(claims, key=lambda c: c.at_seq):
        if claim.ticket in verdicts and verdicts[claim.ticket] is not ClaimVerdict.NOT_COMPLETE:
            continue  # one standing claim per ticket
        if not claim.valid or claim.ticket in out_of_play:
            verdicts[claim.ticket] = ClaimVerdict.INVALID
            continue
        done_seq = replay.completion_seq.get(claim.ticket)
        if done_seq is None or done_seq > claim.at_seq:
            verdicts[claim.ticket] = ClaimVerdict.NOT_COMPLETE
            continue
        later = sum(1 for s in replay.valid_seqs if done_seq < s <= claim.at_seq)
        if later > settings.claim_window_spins:  # S9-22: the player must shout in time
            verdicts[claim.ticket] = ClaimVerdict.LATE
            continue
        verdicts[claim.ticket] = ClaimVerdict.BEATEN
        good.append(claim.ticket)
    return verdicts, good


def _winners(
    good: list[K], replay: _Replay[K], settings: Super9Settings
) -> tuple[list[K], list[K]]:
    """(jackpot winners, consolation winners) among the good claims (S9-13, S9-14, S9-16)."""
    completed = replay.engine.completed

    def earliest(candidates: list[K]) -> list[K]:
        if not candidates:
            return []
        first = min(completed[k] for k in candidates)
        return sorted((k for k in candidates if completed[k] == first), key=str)

    window = settings.jackpot_spins
    # S9-14: all nine within the jackpot window, and claimed.
    jackpot = earliest([k for k in good if replay.completion_counted[k] <= window])
    # S9-16: the first ticket(s) to complete, however many spins it took; when the
    # jackpot winner does not take it too, the first to complete after the 18th spin.
    pool = good
    if jackpot and not settings.jackpot_winner_takes_consolation:
        pool = [k for k in good if replay.completion_counted[k] > window]
    return jackpot, earliest(pool)


def settle(
    tickets: Mapping[K, Iterable[int]],
    spins: Iterable[SpinFact],
    claims: Iterable[ClaimFact[K]],
    *,
    settings: Super9Settings,
    jackpot_in_cents: int,
    buy_ins_cents: int,
    disqualified: Iterable[K] = (),
) -> Settlement[K]:
    if buy_ins_cents < 0 or jackpot_in_cents < 0:
        raise ValueError("buy-ins and jackpot must not be negative")
    out_of_play = set(disqualified)
    replay = _replay(tickets, spins, settings, out_of_play)
    verdicts, good = _judge(claims, replay, settings, out_of_play)
    jackpot_winners, consolation_winners = _winners(good, replay, settings)
    for k in (*jackpot_winners, *consolation_winners):
        verdicts[k] = ClaimVerdict.WINNER
    money = _money(
        jackpot_winners,
        consolation_winners,
        settings=settings,
        jackpot_in_cents=jackpot_in_cents,
        buy_ins_cents=buy_ins_cents,
    )
    return Settlement(
        **money,
        verdicts=verdicts,
        completed_at=dict(replay.engine.completed),
        valid_spins=replay.engine.spins,
    )


def _money(
    jackpot_winners: list[K],
    consolation_winners: list[K],
    *,
    settings: Super9Settings,
    jackpot_in_cents: int,
    buy_ins_cents: int,
) -> dict[str, Any]:
    """The cents of a session (see the module docstring): Settlement's money fields."""
    consolation = buy_ins_cents * CONSOLATION_PERCENT // 100
    contribution = buy_ins_cents - consolation
    payouts: list[Payout[K]] = []
    remainder = retained = seed_added = pot = 0
    if jackpot_winners:
        pot = jackpot_in_cents
        if settings.winning_contribution is WinningContribution.PAID_WITH_JACKPOT:
            pot += contribution
        paid, remainder = _split(pot, jackpot_winners, PrizeKind.JACKPOT)
        payouts += paid
        seed_added = carry = settings.jackpot_seed_cents
        if settings.winning_contribution is WinningContribution.SEEDS_NEXT:
            carry += contribution
        elif settings.winning_contribution is WinningContribution.RESTART_AT_SEED:
            retained = contribution  # S9-15: the winning session adds nothing
    else:
        carry = jackpot_in_cents + contribution  # S9-15: grows when not won
    paid, rest = _split(consolation, consolation_winners, PrizeKind.CONSOLATION)
    payouts += paid
    unwon = 0 if consolation_winners else consolation
    remainder += rest if consolation_winners else 0
    if leftovers_to_house(settings, jackpot_won=bool(jackpot_winners)):
        retained += remainder + unwon
    else:
        carry += remainder + unwon
    return {
        "buy_ins_cents": buy_ins_cents,
        "consolation_pool_cents": consolation,
        "contribution_cents": contribution,
        "jackpot_in_cents": jackpot_in_cents,
        "jackpot_won": bool(jackpot_winners),
        "jackpot_pot_cents": pot,
        "seed_added_cents": seed_added,
        "remainder_cents": remainder,
        "unwon_consolation_cents": unwon,
        "jackpot_out_cents": carry,
        "retained_cents": retained,
        "payouts": tuple(payouts),
    }
