"""Team ranking, a house format (docs/rules.md#h1 to #h9): pure rules, Hypothesis-driven."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.tournament.rules.teams import (
    TeamFacts,
    TeamLine,
    TeamScoring,
    check_members,
    check_unlocked,
    member_scores,
    rank_teams,
)
from gateway.tournament.rules.violations import RuleViolation

credits = st.integers(min_value=0, max_value=5_000)
Case = tuple[list[TeamFacts], dict[int, int], TeamScoring]


@st.composite
def field(draw: st.DrawFn) -> Case:
    """Teams of 1..4 distinct players each; some players have a score, some none; a
    small score range so that equal totals and full ties come up often."""
    n_teams = draw(st.integers(min_value=1, max_value=6))
    teams: list[TeamFacts] = []
    best: dict[int, int] = {}
    next_player = 1
    for t in range(n_teams):
        size = draw(st.integers(min_value=1, max_value=4))
        members = tuple(range(next_player, next_player + size))
        next_player += size
        for p in members:
            score = draw(st.none() | st.integers(min_value=0, max_value=6))
            if score is not None:
                best[p] = score
        teams.append(TeamFacts(t + 1, f"team {t + 1:02d}", members))
    n = draw(st.none() | st.integers(min_value=1, max_value=4))
    scoring = TeamScoring("sum" if n is None else "best-n", n, 1, 4)
    return teams, best, scoring


@given(st.lists(st.tuples(st.integers(1, 5), credits), max_size=30))
def test_h5_a_member_counts_with_their_best_single_entry(lines: list[tuple[int, int]]) -> None:
    best = member_scores(lines)
    assert set(best) == {p for p, _ in lines}
    for player, score in best.items():
        assert score == max(c for p, c in lines if p == player)


@given(field())
def test_h6_sum_or_best_n_of_the_members_scores(case: Case) -> None:
    teams, best, scoring = case
    lines = rank_teams(teams, best, scoring)
    assert sorted(x.team_id for x in lines) == sorted(t.team_id for t in teams)
    for line in lines:
        team = next(t for t in teams if t.team_id == line.team_id)
        scores = sorted((best[p] for p in team.members if p in best), reverse=True)
        expected = scores if scoring.best_n is None else scores[: scoring.best_n]
        assert line.total == sum(expected)
        assert [c for _, c in line.counted] == expected
        assert (line.place is None) == (not scores)  # unscored teams have no place


def _counted(line: TeamLine) -> list[int]:
    return [c for _, c in line.counted]


def _before(x: TeamLine, y: TeamLine) -> bool:
    return (x.total, _counted(x)) > (y.total, _counted(y))


@given(field())
def test_h7_order_by_total_then_countback_ties_share_the_place(case: Case) -> None:
    teams, best, scoring = case
    lines = [x for x in rank_teams(teams, best, scoring) if x.place is not None]
    for a, b in itertools.pairwise(lines):
        ca, cb = _counted(a), _counted(b)
        assert a.total >= b.total
        if a.total == b.total:
            assert ca >= cb  # countback: best single score first, a longer list on a prefix
        assert a.place is not None
        assert b.place is not None
        if (a.total, ca) == (b.total, cb):  # no card for teams: a shared place
            assert a.place == b.place
            assert a.tied
            assert b.tied
        else:
            assert a.place < b.place
    for line in lines:  # competition places: 1 + the number of teams strictly ahead
        assert line.place == 1 + sum(1 for x in lines if _before(x, line))


@given(field(), st.data())
def test_h8_a_disqualified_member_s_score_drops_out_and_never_raises_the_team(
    case: Case, data: st.DataObject
) -> None:
    """H8: the individual standings leave a disqualified player out, so they are absent
    from ``best``; their team's score can only fall, the member is listed scoreless and
    no other team's score moves."""
    teams, best, scoring = case
    if not best:
        return
    out = data.draw(st.sampled_from(sorted(best)))
    before = {x.team_id: x for x in rank_teams(teams, best, scoring)}
    rest = {p: c for p, c in best.items() if p != out}
    after = {x.team_id: x for x in rank_teams(teams, rest, scoring)}
    for team in teams:
        assert after[team.team_id].total <= before[team.team_id].total
        if out in team.members:
            assert after[team.team_id].scores[out] is None
            assert out not in dict(after[team.team_id].counted)
        else:
            assert after[team.team_id].total == before[team.team_id].total


def test_h7_countback_decides_equal_totals_and_a_full_tie_shares() -> None:
    teams = [
        TeamFacts(1, "Aces", (1, 2)),
        TeamFacts(2, "Kings", (3, 4)),
        TeamFacts(3, "Queens", (5, 6)),
        TeamFacts(4, "Jacks", (7, 8)),
    ]
    best = {1: 500, 2: 100, 3: 300, 4: 300, 5: 300, 6: 300, 8: 10}
    lines = rank_teams(teams, best, TeamScoring("sum", None, 1, 4))
    assert [(x.name, x.place, x.total, x.tied) for x in lines] == [
        ("Aces", 1, 600, False),  # 500 beats 300 on countback (H7)
        ("Kings", 2, 600, True),
        ("Queens", 2, 600, True),  # the same scores: a shared place, no card draw
        ("Jacks", 4, 10, False),
    ]
    assert lines[3].scores == {7: None, 8: 10}  # player 7 has no score: counts nothing


def test_h6_best_n_counts_only_the_n_best() -> None:
    teams = [TeamFacts(1, "Aces", (1, 2, 3)), TeamFacts(2, "Kings", (4, 5))]
    best = {1: 100, 2: 900, 3: 400, 4: 800, 5: 450}
    by_sum = rank_teams(teams, best, TeamScoring("sum", None, 2, 3))
    by_two = rank_teams(teams, best, TeamScoring("best-n", 2, 2, 3))
    assert [(x.name, x.total) for x in by_sum] == [("Aces", 1400), ("Kings", 1250)]
    assert [(x.name, x.total) for x in by_two] == [("Aces", 1300), ("Kings", 1250)]
    assert by_two[0].counted == ((2, 900), (3, 400))


@pytest.mark.parametrize(
    ("kwargs", "clause"),
    [
        ({"scoring": "average"}, "H6"),
        ({"scoring": "best-n"}, "H6"),
        ({"scoring": "sum", "best_n": 2}, "H6"),
        ({"min_size": 3, "max_size": 2}, "H4"),
        ({"min_size": 0}, "H4"),
        ({"max_size": 13}, "H4"),
        ({"scoring": "best-n", "best_n": 5, "max_size": 4}, "H6"),
    ],
)
def test_h4_h6_bad_settings_are_refused_naming_the_clause(
    kwargs: dict[str, object], clause: str
) -> None:
    with pytest.raises(RuleViolation, match=f"^rule {clause}:"):
        TeamScoring(**kwargs)  # type: ignore[arg-type]


def test_h2_h3_h4_members_are_entry_holders_in_one_team_with_a_captain_among_them() -> None:
    scoring = TeamScoring("sum", None, 2, 3)
    holders = {1, 2, 3, 4}
    check_members(scoring, [1, 2], 1, holders, {})
    cases: list[tuple[list[int], int, dict[int, str], str]] = [
        ([1, 1], 1, {}, "H2"),  # named twice
        ([1], 1, {}, "H4"),  # too small
        ([1, 2, 3, 4], 1, {}, "H4"),  # too big
        ([1, 2], 3, {}, "H3"),  # the captain is not a member
        ([1, 9], 1, {}, "H2"),  # no entry in the tournament
        ([1, 2], 1, {2: "Kings"}, "H2"),  # already in a team
    ]
    for members, captain, in_teams, clause in cases:
        with pytest.raises(RuleViolation, match=f"^rule {clause}:"):
            check_members(scoring, members, captain, holders, in_teams)


def test_h9_a_team_is_fixed_once_a_member_has_played() -> None:
    check_unlocked("members", [])
    with pytest.raises(RuleViolation, match=r"^rule H9: members: player 3 has already played"):
        check_unlocked("members", [7, 3])
