"""Draw engine (rules 12, 13, 19) and settlement money (rules 14-16, 20)."""

from __future__ import annotations

import random

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from gateway.super9.rules.engine import DrawEngine
from gateway.super9.rules.settings import RepeatRule, Super9Settings, WinningContribution
from gateway.super9.rules.settle import ClaimFact, ClaimVerdict, PrizeKind, SpinFact, settle
from gateway.super9.rules.tickets import TicketNumbersError, duplicate_mismatch, validate_numbers


def test_engine_reports_completions_at_the_ninth_number() -> None:
    engine = DrawEngine({"a": range(9), "b": range(1, 10), "c": range(20, 29)})
    out = [engine.call(n) for n in [0, 1, 2, 3, 3, 4, 5, 6, 7]]
    assert out[4].repeat
    assert out[4].distinct == 4  # rule 19: a repeat calls nothing new
    assert [o.completed for o in out] == [()] * 8 + [()]
    assert engine.near_complete() == [("a", 1), ("b", 2)]
    last = engine.call(8)
    assert last.completed == ("a",)
    assert last.spin == 10
    assert last.distinct == 9
    assert engine.call(9).completed == ("b",)


def test_engine_matches_brute_force() -> None:
    rng = random.Random(5)
    tickets = {i: rng.sample(range(37), 9) for i in range(500)}
    engine = DrawEngine(tickets)
    called: set[int] = set()
    for _ in range(60):
        n = rng.randrange(37)
        before = {k for k, v in tickets.items() if set(v) <= called}
        called.add(n)
        after = {k for k, v in tickets.items() if set(v) <= called}
        assert set(engine.call(n).completed) == after - before


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sets(st.integers(0, 36), min_size=9, max_size=9), min_size=1, max_size=60),
    st.lists(
        st.one_of(st.integers(0, 36), st.tuples(st.just("remove"), st.integers(0, 59))),
        max_size=80,
    ),
)
def test_engine_matches_brute_force_with_removals(
    numbers: list[set[int]], steps: list[int | tuple[str, int]]
) -> None:
    """Rules 13 and 21: completions, in ticket order, of tickets still in play only."""
    tickets = {f"t{i}": sorted(v) for i, v in enumerate(numbers)}
    engine = DrawEngine(tickets)
    called: set[int] = set()
    removed: set[str] = set()
    expected: dict[str, int] = {}
    spins = 0
    for step in steps:
        if isinstance(step, tuple):
            key = f"t{step[1] % len(tickets)}"
            removed.add(key)
            expected.pop(key, None)
            engine.remove(key)
        else:
            spins += 1
            fresh = step not in called
            called.add(step)
            done = [
                k
                for k, v in tickets.items()
                if fresh and step in v and set(v) <= called and k not in removed
            ]
            outcome = engine.call(step)
            assert list(outcome.completed) == done
            assert outcome.repeat is not fresh
            expected.update(dict.fromkeys(done, spins))
        assert engine.completed == expected
        near = []
        for i, (key, v) in enumerate(tickets.items()):
            left = -1 if key in removed else len(set(v) - called)
            assert engine.remaining(key) == left
            if 0 < left <= 2:
                near.append((left, i, key))
        assert engine.near_complete(7) == [(k, left) for left, _, k in sorted(near)[:7]]


def test_removed_ticket_never_completes() -> None:
    engine = DrawEngine({"a": range(9)})
    engine.remove("a")  # rule 21
    assert [engine.call(n).completed for n in range(9)] == [()] * 9


def test_ticket_validation_rules_8_and_9() -> None:
    assert validate_numbers([9, 1, 2, 3, 4, 5, 6, 7, 36]) == (1, 2, 3, 4, 5, 6, 7, 9, 36)
    for bad, rule in (
        ([1] * 9, "rule 9"),
        (range(10), "rule 9"),
        (range(8), "rule 8"),
        ([*range(8), 37], "rule 8"),
    ):
        with pytest.raises(TicketNumbersError, match=rule):
            validate_numbers(bad)
    assert duplicate_mismatch(range(9), "8 7 6 5 4 3 2 1 0") is None
    assert "differs" in (duplicate_mismatch(range(9), "0 1 2 3 4 5 6 7 9") or "")
    assert "rule 9" in (duplicate_mismatch(range(9), "0 1 2 3 4 5 6 7 7") or "")


def _spins(numbers: list[int], voided: frozenset[int] = frozenset()) -> list[SpinFact]:
    return [SpinFact(i + 1, n, i + 1 in voided) for i, n in enumerate(numbers)]


def test_claim_window_and_first_completion() -> None:
    tickets = {"a": range(9), "b": range(1, 10)}
    spins = _spins([*range(9), 9])
    # a completes at seq 9 but claims at seq 10: late with the default window 0 (rule 22).
    result = settle(
        tickets,
        spins,
        [ClaimFact("a", 10, True), ClaimFact("b", 10, True)],
        settings=Super9Settings(),
        jackpot_in_cents=500_000,
        buy_ins_cents=10_000,
    )
    assert result.verdicts == {"a": ClaimVerdict.LATE, "b": ClaimVerdict.WINNER}
    wider = Super9Settings(claim_window_spins=1)
    result = settle(
        tickets,
        spins,
        [ClaimFact("a", 10, True), ClaimFact("b", 10, True)],
        settings=wider,
        jackpot_in_cents=500_000,
        buy_ins_cents=10_000,
    )
    assert result.verdicts == {"a": ClaimVerdict.WINNER, "b": ClaimVerdict.BEATEN}


def test_jackpot_winner_not_taking_consolation_passes_it_on() -> None:
    tickets = {"a": range(9), "b": range(1, 10)}
    no_double = Super9Settings(
        jackpot_winner_takes_consolation=False,
        winning_contribution=WinningContribution.PAID_WITH_JACKPOT,
    )
    result = settle(
        tickets,
        _spins([*range(10)]),
        [ClaimFact("a", 9, True), ClaimFact("b", 10, True)],
        settings=no_double,
        jackpot_in_cents=500_000,
        buy_ins_cents=10_000,
    )
    # a: jackpot = 500000 + 75% of 10000 (paid with it); b: consolation 2500 (rule 16).
    assert [(p.ticket, p.kind, p.amount_cents) for p in result.payouts] == [
        ("a", PrizeKind.JACKPOT, 507_500),
        ("b", PrizeKind.CONSOLATION, 2_500),
    ]
    assert result.jackpot_out_cents == 500_000  # restarts at the seed


def test_voided_spin_is_never_called() -> None:
    result = settle(
        {"a": range(9)},
        _spins([*range(8), 8, 8], voided=frozenset({9})),
        [ClaimFact("a", 9, True)],
        settings=Super9Settings(),
        jackpot_in_cents=0,
        buy_ins_cents=5_000,
    )
    assert result.verdicts["a"] is ClaimVerdict.NOT_COMPLETE  # rule 18.2
    assert result.completed_at == {"a": 9}  # the second 8, valid spin 9


# -- money is conserved (rules 15, 16, 20) ---------------------------------------------

session_strategy = st.fixed_dictionaries(
    {
        "tickets": st.lists(
            st.permutations(list(range(37))).map(lambda p: p[:9]), min_size=0, max_size=8
        ),
        # every number once in random order, cut short, with repeats mixed in (rule 19)
        "order": st.permutations(list(range(37))),
        "cut": st.integers(9, 37),
        "repeats": st.lists(st.tuples(st.integers(0, 60), st.integers(0, 36)), max_size=12),
        "voids": st.frozensets(st.integers(1, 60), max_size=5),
        "claims": st.lists(
            st.tuples(st.integers(0, 7), st.integers(0, 60), st.booleans()), max_size=6
        ),
        "disqualified": st.frozensets(st.integers(0, 7), max_size=3),
        # eager: every ticket claims after every spin, so completions are claimed in time
        "eager": st.booleans(),
    }
)
settings_strategy = st.builds(
    Super9Settings,
    buy_in_cents=st.integers(1, 100_000),
    jackpot_seed_cents=st.integers(0, 1_000_000),
    jackpot_spins=st.integers(9, 37),
    repeat_rule=st.sampled_from(list(RepeatRule)),
    claim_window_spins=st.integers(0, 3),
    jackpot_winner_takes_consolation=st.booleans(),
    winning_contribution=st.sampled_from(list(WinningContribution)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(session_strategy, settings_strategy), min_size=1, max_size=6))
def test_money_is_conserved_to_the_cent(sessions: list[tuple[dict, Super9Settings]]) -> None:  # type: ignore[type-arg]
    first_seed = sessions[0][1].jackpot_seed_cents
    seeds, buy_ins, paid = first_seed, 0, 0
    carry = first_seed
    for facts, cfg in sessions:
        tickets = {i: t for i, t in enumerate(facts["tickets"])}
        spins = list(facts["order"][: facts["cut"]])
        for pos, number in facts["repeats"]:
            spins.insert(pos, number)
        session_buy_ins = len(tickets) * cfg.buy_in_cents
        claims = [ClaimFact(t, s, ok) for t, s, ok in facts["claims"] if t in tickets]
        if facts["eager"]:
            claims += [ClaimFact(t, s, True) for t in tickets for s in range(1, len(spins) + 1)]
        result = settle(
            tickets,
            _spins(spins, facts["voids"]),
            claims,
            settings=cfg,
            jackpot_in_cents=carry,
            buy_ins_cents=session_buy_ins,
            disqualified=facts["disqualified"] & tickets.keys(),
        )
        assert all(p.amount_cents >= 0 for p in result.payouts)
        event(f"jackpot won: {result.jackpot_won}, prizes: {len(result.payouts)}")
        shares: dict[PrizeKind, set[int]] = {}
        for p in result.payouts:  # rule 20: equal shares, to the cent
            shares.setdefault(p.kind, set()).add(p.amount_cents)
        assert all(len(v) == 1 for v in shares.values())
        seeds += result.seed_added_cents
        buy_ins += session_buy_ins
        paid += result.paid_cents
        carry = result.jackpot_out_cents
        assert seeds + buy_ins == paid + carry
