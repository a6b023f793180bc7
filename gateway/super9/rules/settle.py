"""Who won a Super 9 session and what everyone is paid — pure, to the cent.

Inputs are the session's facts (tickets in play, spins in order with their voids,
claims with the spin they were registered at) and the progressive jackpot carried in.
The result is replayed from those facts alone, so a void after the fact (rule 18.2) or a
restart gives the same answer.

Money (all integer cents):

* buy-ins ``B``; consolation pool ``C = floor(B × 25 / 100)`` (rule 16); jackpot
  contribution ``J = B − C`` (rule 15's 75%, plus the odd cents of the floor).
* Jackpot not won: carry-out = carry-in + ``J``.
* Jackpot won (rule 14): the pot is carry-in (+ ``J`` if ``PAID_WITH_JACKPOT``); the
  jackpot restarts at the seed (+ ``J`` if ``SEEDS_NEXT``).  The house adds that seed.
* Equal shares (rule 20): each of ``n`` winners gets ``floor(prize / n)``; the
  remainder (< n cents) goes to the progressive jackpot carry, so every winner gets
  exactly the same and no cent leaves the promotion.
* A consolation nobody won (no valid claim, e.g. every ticket disqualified) is added to
  the jackpot carry.

Invariant (tested with Hypothesis): seeds added + buy-ins = prizes paid + carry-out −
carry-in, for every session.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from gateway.super9.rules.engine import DrawEngine
from gateway.super9.rules.settings import RepeatRule, Super9Settings, WinningContribution

K = TypeVar("K", bound=Hashable)

CONSOLATION_PERCENT = 25  # rule 16
JACKPOT_PERCENT = 100 - CONSOLATION_PERCENT  # rule 15


class PrizeKind(enum.Enum):
    JACKPOT = "jackpot"
    CONSOLATION = "consolation"


class ClaimVerdict(enum.Enum):
    WINNER = "winner"  # completed, claimed in time, earliest
    BEATEN = "beaten"  # valid but someone completed at an earlier spin (rule 13)
    LATE = "late"  # claimed after the claim window (rule 22)
    NOT_COMPLETE = "not-complete"  # not all nine numbers called by the claim
    INVALID = "invalid"  # duplicate mismatch or disqualified ticket (rule 9)


@dataclass(frozen=True, slots=True)
class SpinFact:
    seq: int  # order of arrival, voided spins included
    number: int | None  # None while a void-before-result waits for its number
    voided: bool


@dataclass(frozen=True, slots=True)
class ClaimFact(Generic[K]):
    ticket: K
    at_seq: int  # last spin seq recorded when the claim was registered
    valid: bool  # duplicate matched the top copy (rule 9)


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
    remainder_cents: int  # odd cents of equal shares, added to the carry (rule 20)
    unwon_consolation_cents: int
    jackpot_out_cents: int
    payouts: tuple[Payout[K], ...]
    verdicts: dict[K, ClaimVerdict] = field(default_factory=dict)
    completed_at: dict[K, int] = field(default_factory=dict)  # ticket -> valid spin
    valid_spins: int = 0

    @property
    def paid_cents(self) -> int:
        return sum(p.amount_cents for p in self.payouts)


def _split(prize: int, winners: Sequence[K], kind: PrizeKind) -> tuple[list[Payout[K]], int]:
    """Equal shares (rule 20); returns the payouts and the odd cents left over."""
    if not winners:
        return [], prize
    share, rest = divmod(prize, len(winners))
    return [Payout(w, kind, share) for w in winners], rest


def settle(  # noqa: C901
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
    engine: DrawEngine[K] = DrawEngine({k: v for k, v in tickets.items() if k not in out_of_play})
    # Replay the valid spins (rule 18.2: a voided spin never calls its number).
    completion_seq: dict[K, int] = {}
    completion_counted: dict[K, int] = {}
    valid_seqs: list[int] = []
    for spin in sorted(spins, key=lambda s: s.seq):
        if spin.voided or spin.number is None:
            continue
        outcome = engine.call(spin.number)
        valid_seqs.append(spin.seq)
        counted = (
            outcome.distinct
            if settings.repeat_rule is RepeatRule.DISREGARD_REPEATS  # rule 19
            else outcome.spin
        )
        for key in outcome.completed:
            completion_seq[key] = spin.seq
            completion_counted[key] = counted

    verdicts: dict[K, ClaimVerdict] = {}
    good: list[K] = []
    for claim in sorted(claims, key=lambda c: c.at_seq):
        if claim.ticket in verdicts and verdicts[claim.ticket] is not ClaimVerdict.NOT_COMPLETE:
            continue  # one standing claim per ticket
        if not claim.valid or claim.ticket in out_of_play:
            verdicts[claim.ticket] = ClaimVerdict.INVALID
            continue
        done_seq = completion_seq.get(claim.ticket)
        if done_seq is None or done_seq > claim.at_seq:
            verdicts[claim.ticket] = ClaimVerdict.NOT_COMPLETE
            continue
        later = sum(1 for s in valid_seqs if done_seq < s <= claim.at_seq)
        if later > settings.claim_window_spins:  # rule 22: the player must shout in time
            verdicts[claim.ticket] = ClaimVerdict.LATE
            continue
        verdicts[claim.ticket] = ClaimVerdict.BEATEN
        good.append(claim.ticket)

    def earliest(candidates: list[K]) -> list[K]:
        if not candidates:
            return []
        first = min(engine.completed[k] for k in candidates)
        return sorted((k for k in candidates if engine.completed[k] == first), key=str)

    # Rule 14: all nine within the jackpot window, and claimed.
    jackpot_winners = earliest([k for k in good if completion_counted[k] <= settings.jackpot_spins])
    # Rule 16: the first ticket(s) to complete, however many spins it took.
    pool = good
    if jackpot_winners and not settings.jackpot_winner_takes_consolation:
        pool = [k for k in good if k not in jackpot_winners]
    consolation_winners = earliest(pool)
    for k in (*jackpot_winners, *consolation_winners):
        verdicts[k] = ClaimVerdict.WINNER

    consolation = buy_ins_cents * CONSOLATION_PERCENT // 100
    contribution = buy_ins_cents - consolation
    payouts: list[Payout[K]] = []
    remainder = 0
    seed_added = 0
    pot = 0
    if jackpot_winners:
        pot = jackpot_in_cents
        if settings.winning_contribution is WinningContribution.PAID_WITH_JACKPOT:
            pot += contribution
        paid, rest = _split(pot, jackpot_winners, PrizeKind.JACKPOT)
        payouts += paid
        remainder += rest
        seed_added = settings.jackpot_seed_cents
        carry = seed_added
        if settings.winning_contribution is WinningContribution.SEEDS_NEXT:
            carry += contribution
    else:
        carry = jackpot_in_cents + contribution  # rule 15: grows when not won
    paid, rest = _split(consolation, consolation_winners, PrizeKind.CONSOLATION)
    payouts += paid
    unwon = consolation if not consolation_winners else 0
    if consolation_winners:
        remainder += rest
    carry += remainder + unwon
    return Settlement(
        buy_ins_cents=buy_ins_cents,
        consolation_pool_cents=consolation,
        contribution_cents=contribution,
        jackpot_in_cents=jackpot_in_cents,
        jackpot_won=bool(jackpot_winners),
        jackpot_pot_cents=pot,
        seed_added_cents=seed_added,
        remainder_cents=remainder,
        unwon_consolation_cents=unwon,
        jackpot_out_cents=carry,
        payouts=tuple(payouts),
        verdicts=verdicts,
        completed_at=dict(engine.completed),
        valid_spins=engine.spins,
    )
