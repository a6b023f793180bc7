"""T12–T14, T17, T19: single-entry ranking, cuts and tie-breaks by card draws (pure).

Clauses: docs/rules.md#t12 to #t14, #t17, #t19.
"""

from __future__ import annotations

import pytest

from gateway.tournament.rules.cards import Card
from gateway.tournament.rules.enums import CardSuit
from gateway.tournament.rules.ranking import (
    HeatPlace,
    ScoreLine,
    TieDraw,
    check_draw_round,
    heat_places,
    prize_order,
    qualify_finalists,
    qualify_from_qualifying,
    rank,
)
from gateway.tournament.rules.violations import RuleViolation


def lines(*credits: int, player_of: dict[int, int] | None = None) -> list[ScoreLine]:
    """Entry ids 1.. with the given credits; player = entry unless mapped."""
    return [ScoreLine(i, (player_of or {}).get(i, i), c) for i, c in enumerate(credits, start=1)]


def test_rule_12_14_ranking_is_by_single_entry_not_by_player() -> None:
    # Player 7 holds entries 1 and 3: both rank on their own, never summed (T12).
    table = rank(lines(500, 900, 700, player_of={1: 7, 3: 7}))
    assert [(x.place, x.entry_id, x.player_id) for x in table.lines] == [
        (1, 2, 2),
        (2, 3, 7),
        (3, 1, 7),
    ]


def test_rule_12_an_entry_has_one_score_per_ranking() -> None:
    with pytest.raises(RuleViolation, match=r"rule 12: entry 1 has two scores"):
        rank([ScoreLine(1, 1, 10), ScoreLine(1, 1, 20)])


def test_rule_2_disqualified_players_drop_out_of_the_ranking() -> None:
    table = rank(lines(900, 800, 700), disqualified_players={1}, disqualified_entries={3})
    assert [x.entry_id for x in table.lines] == [2]
    assert table.lines[0].place == 1


def test_rule_19_unbroken_ties_share_a_place_and_are_reported() -> None:
    table = rank(lines(900, 700, 700, 700, 500))
    assert [(x.entry_id, x.place, x.tied) for x in table.lines] == [
        (1, 1, False),
        (2, 2, True),
        (3, 2, True),
        (4, 2, True),
        (5, 5, False),
    ]
    (tie,) = table.ties
    assert (tie.place, tie.credits, tie.entry_ids, tie.next_round) == (2, 700, (2, 3, 4), 1)


def test_rule_19_highest_card_wins_ace_low_and_equal_cards_draw_again() -> None:
    draws = [
        TieDraw(2, 700, 1, 1),  # Ace: low
        TieDraw(3, 700, 1, 12),  # Queen
        TieDraw(4, 700, 1, 12),  # Queen again: 3 and 4 draw again
        TieDraw(3, 700, 2, 4),
        TieDraw(4, 700, 2, 9),
        TieDraw(2, 700, 2, 13),  # entry 2 is no longer tied: its round-2 card is ignored
    ]
    table = rank(lines(900, 700, 700, 700, 500), draws)
    assert [(x.entry_id, x.place, x.tied) for x in table.lines] == [
        (1, 1, False),
        (4, 2, False),
        (3, 3, False),
        (2, 4, False),
        (5, 5, False),
    ]
    assert table.ties == ()


def test_rule_19_a_half_drawn_round_leaves_the_tie_standing() -> None:
    draws = [TieDraw(2, 700, 1, 5), TieDraw(3, 700, 1, 8)]  # entry 4 has not drawn
    table = rank(lines(900, 700, 700, 700), draws)
    assert table.ties[0].entry_ids == (2, 3, 4)
    assert table.ties[0].next_round == 1


def test_rule_19_draws_for_an_old_score_do_not_apply_after_a_correction() -> None:
    draws = [TieDraw(1, 700, 1, 2), TieDraw(2, 700, 1, 9)]
    table = rank(lines(800, 800), draws)  # the director corrected both to 800
    assert table.ties[0].entry_ids == (1, 2)


def test_rule_13_14_top_entry_to_the_final_next_n_to_the_semis() -> None:
    table = rank(lines(1000, 900, 800, 700, 600))
    outcome = qualify_from_qualifying(table, semi_final_places=3)
    assert outcome.direct_finalists == (1,)
    assert outcome.semi_finalists == (2, 3, 4)
    assert outcome.complete


def test_rule_19_tie_straddling_the_semi_cut_is_pending_until_drawn() -> None:
    credits = (1000, 900, 800, 800, 800, 600)  # semi places 2..4: entries 3,4,5 tie for 2 seats
    outcome = qualify_from_qualifying(rank(lines(*credits)), semi_final_places=3)
    assert outcome.direct_finalists == (1,)
    assert outcome.semi_finalists == (2,)
    assert [t.entry_ids for t in outcome.pending] == [(3, 4, 5)]
    drawn = rank(
        lines(*credits), [TieDraw(3, 800, 1, 3), TieDraw(4, 800, 1, 11), TieDraw(5, 800, 1, 7)]
    )
    outcome = qualify_from_qualifying(drawn, semi_final_places=3)
    assert outcome.semi_finalists == (2, 4, 5)
    assert outcome.complete


def test_rule_13_19_tie_for_the_top_score_holds_both_cuts() -> None:
    outcome = qualify_from_qualifying(rank(lines(1000, 1000, 900)), semi_final_places=2)
    assert outcome.direct_finalists == ()
    assert outcome.semi_finalists == (3,)
    assert [t.entry_ids for t in outcome.pending] == [(1, 2)]


def test_rule_19_a_tie_inside_the_cut_needs_no_draw() -> None:
    outcome = qualify_from_qualifying(rank(lines(1000, 900, 900, 500)), semi_final_places=2)
    assert outcome.semi_finalists == (2, 3)
    assert outcome.complete


def test_rule_17_finalists_by_semi_final_quota() -> None:
    assert qualify_finalists(rank(lines(50, 40, 30, 20)), quota=2).selected == (1, 2)
    pending = qualify_finalists(rank(lines(50, 40, 40, 20)), quota=2)
    assert pending.selected == (1,)
    assert pending.pending[0].entry_ids == (2, 3)


def test_rule_19_every_prize_place_needs_a_strict_order() -> None:
    result = prize_order(rank(lines(90, 80, 80, 70, 60, 60)), prize_places=3)
    assert result.selected == (1,)
    assert [t.entry_ids for t in result.pending] == [(2, 3)]
    assert prize_order(rank(lines(90, 80, 70, 60, 60)), prize_places=3).complete


def test_rule_19_a_draw_round_is_for_exactly_the_tied_entries() -> None:
    (tie,) = rank(lines(900, 700, 700)).ties
    with pytest.raises(
        RuleViolation, match=r"rule 19: round 1 at 700 credits: missing entries \[3\]"
    ):
        check_draw_round(tie, {2: Card(3, CardSuit.CLUBS)})
    with pytest.raises(RuleViolation, match=r"entries \[1\] are not in this tie"):
        check_draw_round(
            tie,
            {1: Card(3, CardSuit.CLUBS), 2: Card(4, CardSuit.CLUBS), 3: Card(5, CardSuit.CLUBS)},
        )


def test_heat_places_flag_ties_and_break_none_t19() -> None:
    """T19: a heat's own result shares a rank between equal credits and flags the tie;
    only a card draw breaks it.  T20: a malfunctioned machine is not ranked."""
    credits = {"A03": 900, "A01": 900, "A02": 1200, "A04": 50, "A05": 40}
    assert heat_places(credits, left_out={"A04"}) == [
        HeatPlace(1, "A02", 1200, False),
        HeatPlace(2, "A01", 900, True),
        HeatPlace(2, "A03", 900, True),
        HeatPlace(4, "A05", 40, False),
    ]
    assert heat_places({}) == []
