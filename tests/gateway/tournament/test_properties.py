"""Hypothesis properties: the ranking is a total order in which ties are broken only by
recorded draws (T19); no seat is ever double-booked (T11, T16); credits never move
between entries (T12).

Clauses: docs/rules.md#t19, #t11, #t16, #t12.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.tournament.rules.enums import HeatStatus, Stage
from gateway.tournament.rules.ranking import ScoreLine, TieDraw, rank
from gateway.tournament.rules.seating import HeatFacts, check_registration
from gateway.tournament.rules.violations import RuleViolation

scores = st.lists(
    st.tuples(st.integers(1, 8), st.integers(0, 6)),  # (player, credits): few values, many ties
    min_size=0,
    max_size=25,
)


@st.composite
def scored_with_draws(draw: st.DrawFn) -> tuple[list[ScoreLine], list[TieDraw]]:
    raw = draw(scores)
    lines = [ScoreLine(entry, player, credits) for entry, (player, credits) in enumerate(raw, 1)]
    draws = []
    for line in lines:
        for round_number in range(1, 4):
            if draw(st.booleans()):
                draws.append(
                    TieDraw(line.entry_id, line.credits, round_number, draw(st.integers(1, 13)))
                )
    return lines, draws


def _draw_path(entry: int, credits: int, draws: list[TieDraw]) -> tuple[int, ...]:
    by_round = {d.round: d.value for d in draws if d.entry_id == entry and d.credits == credits}
    return tuple(by_round.get(r, 0) for r in range(1, 4))


@given(scored_with_draws(), st.frozensets(st.integers(1, 8), max_size=3))
@settings(max_examples=300, deadline=None)
def test_rule_19_ranking_is_a_total_order_broken_only_by_draws(
    data: tuple[list[ScoreLine], list[TieDraw]], disqualified: frozenset[int]
) -> None:
    lines, draws = data
    table = rank(lines, draws, disqualified)
    kept = [x for x in lines if x.player_id not in disqualified]
    # Every remaining entry exactly once (T2 drops only the disqualified).
    assert sorted(x.entry_id for x in table.lines) == sorted(x.entry_id for x in kept)
    assert [x.position for x in table.lines] == list(range(1, len(kept) + 1))
    by_entry = {x.entry_id: x for x in table.lines}
    for a in table.lines:
        for b in table.lines:
            if a.credits > b.credits:
                assert a.place < b.place  # more credits always rank higher
            if a.place == b.place:
                assert a.credits == b.credits  # only equal scores ever share a place
    # Place = competition rank: 1 + number of entries strictly ahead.
    for x in table.lines:
        assert x.place == 1 + sum(1 for y in table.lines if y.place < x.place)
    # Equal scores are ordered only where the recorded cards say so.
    for a in table.lines:
        for b in table.lines:
            if a.credits == b.credits and a.place < b.place:
                pa = _draw_path(a.entry_id, a.credits, draws)
                pb = _draw_path(b.entry_id, b.credits, draws)
                first_diff = next(i for i in range(3) if pa[i] != pb[i])
                assert pa[first_diff] > pb[first_diff] > 0
    # Unresolved ties are exactly the places shared by several entries.
    counts = Counter(x.place for x in table.lines)
    assert {t.place for t in table.ties} == {p for p, n in counts.items() if n > 1}
    for tie in table.ties:
        assert all(by_entry[e].tied and by_entry[e].place == tie.place for e in tie.entry_ids)


@given(scored_with_draws())
@settings(max_examples=200, deadline=None)
def test_rule_19_ranking_ignores_input_order(data: tuple[list[ScoreLine], list[TieDraw]]) -> None:
    lines, draws = data
    a = rank(lines, draws)
    b = rank(list(reversed(lines)), list(reversed(draws)))
    assert a == b


@given(scored_with_draws())
@settings(max_examples=200, deadline=None)
def test_rule_12_no_credit_moves_between_entries(
    data: tuple[list[ScoreLine], list[TieDraw]],
) -> None:
    """Each ranked line carries exactly its own entry's credits and holder; nothing pooled."""
    lines, draws = data
    table = rank(lines, draws)
    original = {x.entry_id: (x.player_id, x.credits) for x in lines}
    assert {x.entry_id: (x.player_id, x.credits) for x in table.lines} == original
    assert sum(x.credits for x in table.lines) == sum(x.credits for x in lines)


@given(
    st.lists(st.tuples(st.integers(1, 12), st.integers(0, 3)), max_size=60),
    st.sets(st.integers(1, 10), max_size=3),
)
@settings(max_examples=300, deadline=None)
def test_rules_11_16_no_seat_is_ever_double_booked(
    requests: list[tuple[int, int]], out_of_service: set[int]
) -> None:
    """Any sequence of registrations (player, heat) keeps one player per seat and one seat
    per player per heat; refused requests change nothing."""
    start = datetime(2026, 11, 2, 18, tzinfo=UTC)
    seats = tuple(n for n in range(1, 11) if n not in out_of_service)
    heats = {
        h: HeatFacts(h, f"heat {h}", Stage.QUALIFYING, HeatStatus.SCHEDULED, start, seats)
        for h in range(4)
    }
    booked: dict[int, dict[int, int]] = {h: {} for h in heats}  # heat -> seat -> player
    for player, heat_id in requests:
        taken = set(booked[heat_id])
        player_heats = {h for h, s in booked.items() if player in s.values()}
        try:
            number = check_registration(
                heats[heat_id], start - timedelta(hours=1), taken, player_heats
            )
        except RuleViolation as exc:
            assert exc.rule in (9, 16)  # noqa: PT017
            assert exc.rule != 16 or player in booked[heat_id].values()  # noqa: PT017
            assert exc.rule != 9 or len(booked[heat_id]) == len(seats)  # noqa: PT017
            continue
        assert number in seats
        assert number not in booked[heat_id]
        # T11: sequential order — every lower seat is already taken
        assert all(n in booked[heat_id] for n in seats if n < number)
        booked[heat_id][number] = player
    for seat_map in booked.values():
        assert len(set(seat_map.values())) == len(seat_map)
