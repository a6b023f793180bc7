"""Draw engine (S9-12, S9-13, S9-19) and settlement money (S9-14–S9-16, S9-20).

Clauses: docs/rules.md#s9-12, #s9-13, #s9-19, #s9-14 to #s9-16, #s9-20.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from gateway.super9.rules.engine import DrawEngine
from gateway.super9.rules.settings import (
    Leftovers,
    RepeatRule,
    Super9Settings,
    WinningContribution,
)
from gateway.super9.rules.settle import ClaimFact, ClaimVerdict, PrizeKind, SpinFact, settle
from gateway.super9.rules.tickets import (
    TicketNumbersError,
    duplicate_mismatch,
    parse_numbers,
    validate_numbers,
)


def test_engine_reports_completions_at_the_ninth_number() -> None:
    engine = DrawEngine({"a": range(9), "b": range(1, 10), "c": range(20, 29)})
    out = [engine.call(n) for n in [0, 1, 2, 3, 3, 4, 5, 6, 7]]
    assert out[4].repeat
    assert out[4].distinct == 4  # S9-19: a repeat calls nothing new
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
    """S9-13 and S9-21: completions, in ticket order, of tickets still in play only."""
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
    engine.remove("a")  # S9-21
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


def test_s9_9_a_keyed_minus_nine_is_refused_not_read_as_nine() -> None:
    """S9-8/S9-9: only spaces and commas separate numbers, so "-9" is refused (S9-8),
    never read as 9; S9-9 breaches carry their rule for the desk to act on."""
    with pytest.raises(TicketNumbersError, match="rule 8: '-9'"):
        parse_numbers("1 2 3 4 5 6 7 8 -9")
    with pytest.raises(TicketNumbersError, match="rule 8"):
        parse_numbers("1-2-3")
    assert parse_numbers("1,2, 3") == (1, 2, 3)
    with pytest.raises(TicketNumbersError) as caught:
        validate_numbers([1, 1, 2, 3, 4, 5, 6, 7, 8])
    assert caught.value.rule == 9


def _spins(numbers: list[int], voided: frozenset[int] = frozenset()) -> list[SpinFact]:
    return [SpinFact(i + 1, n, i + 1 in voided) for i, n in enumerate(numbers)]


def test_claim_window_and_first_completion() -> None:
    tickets = {"a": range(9), "b": range(1, 10)}
    spins = _spins([*range(9), 9])
    # a completes at seq 9 but claims at seq 10: late with the default window 0 (S9-22).
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
    tickets = {"a": range(9), "b": range(1, 10), "c": range(20, 29)}
    no_double = Super9Settings(
        jackpot_winner_takes_consolation=False,
        winning_contribution=WinningContribution.PAID_WITH_JACKPOT,
    )
    spins = [*range(10), *range(10, 20), *range(20, 29)]  # c completes on spin 29
    result = settle(
        tickets,
        _spins(spins),
        [ClaimFact("a", 9, True), ClaimFact("b", 10, True), ClaimFact("c", 29, True)],
        settings=no_double,
        jackpot_in_cents=500_000,
        buy_ins_cents=15_000,
    )
    # a: jackpot = 500000 + 75% of 15000 (paid with it); c, the first to complete after
    # the 18th spin, takes the consolation 3750 (S9-16); b, inside the window, nothing.
    assert [(p.ticket, p.kind, p.amount_cents) for p in result.payouts] == [
        ("a", PrizeKind.JACKPOT, 511_250),
        ("c", PrizeKind.CONSOLATION, 3_750),
    ]
    assert result.verdicts["b"] is ClaimVerdict.BEATEN
    assert result.jackpot_out_cents == 500_000  # restarts at the seed


def test_s9_16_consolation_is_for_the_first_to_complete_after_the_18th_spin() -> None:
    """S9-16: with the jackpot winner not also taking it, the consolation goes to the
    first ticket(s) to complete *after the 18th spin*, never to a second completion
    within the first 18; if none completes after it, the consolation is unwon."""
    tickets = {"a": range(9), "b": range(1, 10)}
    no_double = Super9Settings(jackpot_winner_takes_consolation=False)
    result = settle(
        tickets,
        _spins([*range(10)]),
        [ClaimFact("a", 9, True), ClaimFact("b", 10, True)],
        settings=no_double,
        jackpot_in_cents=500_000,
        buy_ins_cents=10_000,
    )
    assert [(p.ticket, p.kind) for p in result.payouts] == [("a", PrizeKind.JACKPOT)]
    assert result.unwon_consolation_cents == 2_500
    # Restart at the seed (S9-15 default): the winning session adds nothing, even its
    # unwon consolation, which the house keeps.
    assert result.jackpot_out_cents == 500_000
    assert result.retained_cents == 7_500 + 2_500


def test_s9_15_jackpot_restarts_at_r5000() -> None:
    """S9-15: after a win the jackpot starts again at exactly R5,000 (default
    ``restart-at-seed``); the winning session adds nothing.  The two other readings stay
    as settings: ``seeds-next`` adds its 75% on top, ``paid-with-jackpot`` pays it out."""
    tickets = {"a": range(9), "b": range(1, 10)}  # both complete within 18: split pot
    spins = _spins([*range(1, 10), 0])  # b on spin 9, a on spin 10
    claims = [ClaimFact("a", 10, True), ClaimFact("b", 9, True)]

    def run(**changes: object) -> tuple[list[tuple[str, int]], int, int]:
        cfg = Super9Settings().with_changes(changes)
        r = settle(
            tickets, spins, claims, settings=cfg, jackpot_in_cents=600_001, buy_ins_cents=10_000
        )
        return (
            [(p.kind.value, p.amount_cents) for p in r.payouts],
            r.jackpot_out_cents,
            (r.retained_cents),
        )

    assert Super9Settings().winning_contribution is WinningContribution.RESTART_AT_SEED
    assert run() == ([("jackpot", 600_001), ("consolation", 2_500)], 500_000, 7_500)
    assert run(winning_contribution="seeds-next") == (
        [("jackpot", 600_001), ("consolation", 2_500)],
        507_500,
        0,
    )
    paid = run(winning_contribution="paid-with-jackpot")
    assert paid == ([("jackpot", 607_501), ("consolation", 2_500)], 500_000, 0)


def test_s9_20_leftovers_go_where_the_setting_says() -> None:
    """S9-16/S9-20: the odd cents of an equal split and an unwon consolation are
    leftovers; ``leftovers`` = ``jackpot`` (default) adds them to the progressive jackpot,
    ``house`` keeps them (recorded as retained)."""
    tickets = {"x": range(9), "y": range(9)}
    spins = _spins([*range(19, 37), *range(9)])  # both complete after the 18th spin
    claims = [ClaimFact("x", 27, True), ClaimFact("y", 27, True)]
    default = settle(
        tickets,
        spins,
        claims,
        settings=Super9Settings(),
        jackpot_in_cents=500_000,
        buy_ins_cents=9_999,
    )
    assert Super9Settings().leftovers is Leftovers.JACKPOT
    assert default.remainder_cents == 1
    assert default.retained_cents == 0
    assert default.jackpot_out_cents == 500_000 + 7_500 + 1
    house = settle(
        tickets,
        spins,
        claims,
        settings=Super9Settings(leftovers=Leftovers.HOUSE),
        jackpot_in_cents=500_000,
        buy_ins_cents=9_999,
    )
    assert house.jackpot_out_cents == 500_000 + 7_500
    assert house.retained_cents == 1
    unwon = settle(
        tickets,
        spins,
        [],
        settings=Super9Settings(leftovers=Leftovers.HOUSE),
        jackpot_in_cents=500_000,
        buy_ins_cents=9_999,
    )
    assert unwon.unwon_consolation_cents == 2_499
    assert unwon.retained_cents == 2_499


def test_voided_spin_is_never_called() -> None:
    result = settle(
        {"a": range(9)},
        _spins([*range(8), 8, 8], voided=frozenset({9})),
        [ClaimFact("a", 9, True)],
        settings=Super9Settings(),
        jackpot_in_cents=0,
        buy_ins_cents=5_000,
    )
    assert result.verdicts["a"] is ClaimVerdict.NOT_COMPLETE  # S9-18.2
    assert result.completed_at == {"a": 9}  # the second 8, valid spin 9


# -- money is conserved (S9-15, S9-16, S9-20) ---------------------------------------------

session_strategy = st.fixed_dictionaries(
    {
        "tickets": st.lists(
            st.permutations(list(range(37))).map(lambda p: p[:9]), min_size=0, max_size=8
        ),
        # every number once in random order, cut short, with repeats mixed in (S9-19)
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
    leftovers=st.sampled_from(list(Leftovers)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(session_strategy, settings_strategy), min_size=1, max_size=6))
def test_money_is_conserved_to_the_cent(sessions: list[tuple[dict, Super9Settings]]) -> None:  # type: ignore[type-arg]
    first_seed = sessions[0][1].jackpot_seed_cents
    seeds, buy_ins, paid, retained = first_seed, 0, 0, 0
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
        for p in result.payouts:  # S9-20: equal shares, to the cent
            shares.setdefault(p.kind, set()).add(p.amount_cents)
        assert all(len(v) == 1 for v in shares.values())
        seeds += result.seed_added_cents
        buy_ins += session_buy_ins
        paid += result.paid_cents
        retained += result.retained_cents
        carry = result.jackpot_out_cents
        assert seeds + buy_ins == paid + carry + retained
