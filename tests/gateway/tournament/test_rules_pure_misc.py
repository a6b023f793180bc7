"""Pure rules: cards (T19), seating (T10, T11, T16, T22), final stages (T14, T16, T21),
incidents (T20–T21), settings.

Clauses: docs/rules.md#t19, #t10, #t11, #t16, #t22, #t14, #t21, #t20, #t21.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime, timedelta

import pytest

from gateway.tournament.rules.cards import FULL_DECK, Card, digital_card_round, parse_seed, shuffle
from gateway.tournament.rules.enums import CardSuit, HeatStatus, Stage
from gateway.tournament.rules.final_stages import (
    ProxyForm,
    SeatSlot,
    StageSeat,
    check_proxy_form,
    draw_seats,
    seats_forfeited_at_start,
)
from gateway.tournament.rules.incidents import (
    FailedAttempt,
    FailureOutcome,
    MalfunctionOutcome,
    check_malfunction_allowed,
    difficulties_began,
    failure_outcome,
    failure_time,
    malfunction_outcome,
)
from gateway.tournament.rules.seating import (
    FreeSeat,
    HeatFacts,
    absent_seats,
    check_registration,
    check_reschedule,
    first_free_seat_in_future_heat,
)
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.settings import Package, TournamentSettings, Validity

T0 = datetime(2026, 11, 2, 16, 0, tzinfo=UTC)


def heat(
    hid: int,
    starts: datetime = T0,
    stage: Stage = Stage.QUALIFYING,
    status: HeatStatus = HeatStatus.SCHEDULED,
    seats: tuple[int, ...] = (1, 2, 3),
) -> HeatFacts:
    return HeatFacts(hid, f"heat {hid}", stage, status, starts, seats)


# --- T19: cards --------------------------------------------------------------------


def test_rule_19_card_values_ace_low_king_high() -> None:
    assert [Card.parse(t).value for t in ("AS", "2h", "10D", "JC", "QS", "KH")] == [
        1,
        2,
        10,
        11,
        12,
        13,
    ]
    assert str(Card.parse("10d")) == "10D"
    for bad in ("1S", "11H", "A", "ZS", "AX", ""):
        with pytest.raises(RuleViolation, match=r"^rule 19"):
            Card.parse(bad)
    with pytest.raises(RuleViolation, match=r"rule 19: card value 14"):
        Card(14, CardSuit.CLUBS)


def test_rule_19_digital_deal_matches_the_documented_algorithm() -> None:
    """Recomputed here from the docstring with hashlib alone, for anyone to check."""
    seed = bytes.fromhex("00" * 31 + "2a")
    context = "tournament=1|stage=final|credits=1500"

    def uniform(ctx: str, n: int) -> int:
        counter = 0
        while True:
            digest = hmac.new(seed, f"{ctx}|{counter}".encode(), hashlib.sha256).digest()
            value = int.from_bytes(digest, "big")
            if value < 2**256 - 2**256 % n:
                return value % n
            counter += 1

    deck = [(v, s) for s in "CDHS" for v in range(1, 14)]
    for i in range(51, 0, -1):
        j = uniform(f"{context}|round=2|{i}", i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    dealt = digital_card_round(seed, context, 2, [30, 10, 20])
    assert {e: str(c) for e, c in dealt.items()} == {
        10: _name(deck[0]),
        20: _name(deck[1]),
        30: _name(deck[2]),
    }


def _name(card: tuple[int, str]) -> str:
    return {1: "A", 11: "J", 12: "Q", 13: "K"}.get(card[0], str(card[0])) + card[1]


def test_rule_19_shuffle_is_a_permutation_and_depends_on_seed_and_context() -> None:
    seed = bytes(range(16))
    a = shuffle(seed, "x", FULL_DECK)
    assert sorted(a) == sorted(FULL_DECK)
    assert len(set(a)) == 52
    assert a == shuffle(seed, "x", FULL_DECK)
    assert a != shuffle(seed, "y", FULL_DECK)
    assert a != shuffle(bytes(range(1, 17)), "x", FULL_DECK)


def test_rule_19_seed_must_be_hex_and_long_enough() -> None:
    assert parse_seed("ab" * 16) == bytes([0xAB]) * 16
    with pytest.raises(RuleViolation, match=r"hexadecimal"):
        parse_seed("xyz")
    with pytest.raises(RuleViolation, match=r"16 bytes"):
        parse_seed("abcd")


# --- T10, T11, T16, T22: seating -----------------------------------------------------


def test_rule_11_sequential_seats_and_no_late_entries() -> None:
    h = heat(1, seats=(1, 2, 4))  # machine 3 out of service
    assert check_registration(h, T0 - timedelta(minutes=1), {1, 2}, set()) == 4
    with pytest.raises(RuleViolation, match=r"rule 11: heat 1 has started; late entries"):
        check_registration(h, T0, set(), set())
    with pytest.raises(RuleViolation, match=r"rule 11: heat 1 is running"):
        check_registration(
            heat(1, status=HeatStatus.RUNNING), T0 - timedelta(hours=1), set(), set()
        )


def test_rule_9_16_full_heat_and_one_seat_per_player() -> None:
    with pytest.raises(RuleViolation, match=r"rule 9: heat 1 is full \(3 seats\)"):
        check_registration(heat(1), T0 - timedelta(hours=1), {1, 2, 3}, set())
    with pytest.raises(RuleViolation, match=r"rule 16: player already holds a seat in heat 1"):
        check_registration(heat(1), T0 - timedelta(hours=1), set(), {1})


def test_rule_14_final_stage_seats_are_not_registered_for() -> None:
    with pytest.raises(RuleViolation, match=r"rule 14: heat 1 is a semi-final heat"):
        check_registration(heat(1, stage=Stage.SEMI_FINAL), T0 - timedelta(hours=1), set(), set())


def test_rule_10_reschedule_needs_notice_before_the_earlier_start() -> None:
    h = heat(1)
    notice = timedelta(hours=1)
    now = T0 - timedelta(hours=3)
    check_reschedule(h, T0 + timedelta(hours=1), now, now, notice)
    with pytest.raises(RuleViolation, match=r"rule 10: the change must be announced at least 60"):
        check_reschedule(
            h,
            T0 + timedelta(hours=1),
            T0 - timedelta(minutes=30),
            T0 - timedelta(minutes=30),
            notice,
        )
    # bringing a heat forward: the new (earlier) start needs the notice
    with pytest.raises(RuleViolation, match=r"rule 10"):
        check_reschedule(h, now + timedelta(minutes=20), now, now, notice)
    with pytest.raises(RuleViolation, match=r"rule 10: heat 1 is closed"):
        check_reschedule(
            heat(1, status=HeatStatus.CLOSED), T0 + timedelta(days=1), now, now, notice
        )
    with pytest.raises(RuleViolation, match=r"rule 10: the announcement cannot be in the future"):
        check_reschedule(h, T0 + timedelta(hours=1), now, now + timedelta(minutes=1), notice)


def test_rule_22_absent_players_forfeit() -> None:
    assert absent_seats({1: 11, 2: 12, 3: 13}, {11, 13}) == [2]


def test_rules_20_21_first_free_seat_in_a_future_similar_heat() -> None:
    later, latest = T0 + timedelta(days=1), T0 + timedelta(days=2)
    heats = [
        heat(2, latest),
        heat(3, later, seats=(1, 2)),
        heat(4, later, stage=Stage.FINAL),
        heat(5, T0 - timedelta(days=1)),
        heat(6, later, status=HeatStatus.POSTPONED),
    ]
    taken = {3: {1, 2}, 2: {1}}
    # heat 3 starts first but is full; heat 2 has seat 2 free
    assert first_free_seat_in_future_heat(Stage.QUALIFYING, T0, heats, taken, set(), 1) == (
        FreeSeat(2, 2)
    )
    # the player already sits in heat 2 (T16): nothing left
    assert first_free_seat_in_future_heat(Stage.QUALIFYING, T0, heats, taken, {2}, 1) is None
    assert first_free_seat_in_future_heat(Stage.FINAL, T0, heats, taken, set(), 1) == (
        FreeSeat(4, 1)
    )


# --- T14, T16, T21: final stages ----------------------------------------------------


def test_rule_14_seat_draw_is_reproducible_from_its_seed() -> None:
    slots = [SeatSlot(h, n) for h in (7, 8) for n in (1, 2, 3)]
    seed = bytes(range(32))
    first = draw_seats(seed, "ctx", [5, 3, 9, 1], slots)
    assert first == draw_seats(seed, "ctx", [1, 3, 5, 9], slots)  # order of entries irrelevant
    assert len(set(first.values())) == 4
    assert set(first.values()) <= set(slots)
    with pytest.raises(RuleViolation, match=r"rule 21: 4 entries but only 3 free seats"):
        draw_seats(seed, "ctx", [1, 2, 3, 4], slots[:3])


SEATS = [
    StageSeat(100, 1, "ID1", 2),
    StageSeat(101, 1, "ID1", 5),
    StageSeat(102, 1, "ID1", 9),
    StageSeat(103, 2, "ID2", 3),
]
FORM_TIME = datetime(2026, 11, 20, 10, tzinfo=UTC)


def test_rule_16_proxies_only_for_extra_seats_and_not_co_participants() -> None:
    check_proxy_form(ProxyForm(101, "NOM1", "Nomsa", FORM_TIME), SEATS, [], None)
    with pytest.raises(RuleViolation, match=r"rule 16: a player plays their own best-placed"):
        check_proxy_form(ProxyForm(100, "NOM1", "Nomsa", FORM_TIME), SEATS, [], None)
    with pytest.raises(RuleViolation, match=r"^rule 16: a player plays their own best-placed seat"):
        check_proxy_form(ProxyForm(103, "NOM1", "Nomsa", FORM_TIME), SEATS, [], None)
    with pytest.raises(RuleViolation, match=r"rule 16: the proxy holds a seat in this stage"):
        check_proxy_form(
            ProxyForm(101, "id 2", "P2", FORM_TIME),
            [*SEATS[:3], StageSeat(103, 2, "ID 2", 3)],
            [],
            None,
        )
    existing = [ProxyForm(101, "NOM1", "Nomsa", FORM_TIME)]
    with pytest.raises(RuleViolation, match=r"rule 16: the proxy already plays another seat"):
        check_proxy_form(ProxyForm(102, "nom-1", "Nomsa", FORM_TIME), SEATS, existing, None)
    with pytest.raises(RuleViolation, match=r"rule 16: seat 101 already has a proxy form"):
        check_proxy_form(ProxyForm(101, "NOM2", "Sipho", FORM_TIME), SEATS, existing, None)
    with pytest.raises(RuleViolation, match=r"rule 16: the proxy form arrived after the stage"):
        check_proxy_form(ProxyForm(102, "NOM2", "Sipho", FORM_TIME), SEATS, existing, FORM_TIME)


def test_rule_16_extra_seats_without_a_form_are_forfeited_at_the_start() -> None:
    assert seats_forfeited_at_start(SEATS, {101}) == [102]
    assert seats_forfeited_at_start(SEATS, set()) == [101, 102]


# --- T20–T21: incidents ------------------------------------------------------------


def test_rules_20_21_malfunction_outcomes() -> None:
    free = FreeSeat(2, 1)
    assert malfunction_outcome(False, False, free) is MalfunctionOutcome.RESEATED
    assert malfunction_outcome(False, False, None) is MalfunctionOutcome.REFUNDED
    assert malfunction_outcome(True, False, None) is MalfunctionOutcome.ADDED_HEAT
    assert malfunction_outcome(True, True, free) is MalfunctionOutcome.DISQUALIFIED
    with pytest.raises(RuleViolation, match=r"rule 20: heat 1 is scheduled"):
        check_malfunction_allowed(HeatStatus.SCHEDULED, "heat 1")
    check_malfunction_allowed(HeatStatus.RUNNING, "heat 1")


def test_rule_20_restart_within_the_reasonable_period_else_postpone() -> None:
    settings = TournamentSettings(postpone_after=timedelta(minutes=30))
    assert failure_outcome(settings, T0, T0 + timedelta(minutes=30)) is FailureOutcome.RESTART
    assert failure_outcome(settings, T0, T0 + timedelta(minutes=31)) is FailureOutcome.POSTPONE
    with pytest.raises(RuleViolation, match=r"rule 20"):
        failure_outcome(settings, T0, T0 - timedelta(seconds=1))


def _attempt(opened: int, failed: int, last: int | None, under_way: bool) -> FailedAttempt:
    """An attempt ``opened``/``failed``/last step at these minutes after T0."""
    minute = timedelta(minutes=1)
    return FailedAttempt(
        opened_at=T0 + opened * minute,
        failed_at=T0 + failed * minute,
        last_in_control=None if last is None else T0 + last * minute,
        under_way=under_way,
    )


def test_rule_20_difficulties_date_from_the_last_controlled_step() -> None:
    """T20: "a reasonable period" runs from when the difficulties began, not from when the
    gateway noticed them: retries that never got under way continue the count."""
    ran = _attempt(0, 20, 12, under_way=True)  # ran, last step at 12, restarted at 20
    retry = _attempt(25, 26, 25, under_way=False)  # armed at 25, failed again
    bare = _attempt(30, 30, None, under_way=False)  # failed before any step
    assert difficulties_began([], []) is None
    assert difficulties_began([ran], []) == T0 + timedelta(minutes=12)
    assert difficulties_began([retry, ran], []) == T0 + timedelta(minutes=12)
    assert difficulties_began([bare], []) == T0 + timedelta(minutes=30)
    assert difficulties_began([bare, retry, ran], []) == T0 + timedelta(minutes=12)
    # A new time announced by the director (T10, T20) starts a new count.
    announced = [T0 + timedelta(minutes=22)]
    assert difficulties_began([retry, ran], announced) == T0 + timedelta(minutes=25)
    assert failure_time(None, T0) == T0
    assert failure_time(T0 + timedelta(minutes=5), T0) == T0  # never later than now
    assert failure_time(T0, T0 + timedelta(minutes=5)) == T0


# --- settings --------------------------------------------------------------------------


def test_settings_round_trip_and_refuse_bad_values() -> None:
    settings = TournamentSettings(
        validity=Validity.HOURS_48,
        prize_places=5,
        packages=(Package("single", 5000, 1), Package("R500", 50000, 10, 5000)),
    )
    assert TournamentSettings.from_json(settings.to_json()) == settings
    with pytest.raises(RuleViolation, match=r"rule 1: minimum_age may not be below 18"):
        TournamentSettings(minimum_age=16)
    with pytest.raises(RuleViolation, match=r"unique codes"):
        TournamentSettings(packages=(Package("a", 1, 1), Package("a", 2, 2)))
    with pytest.raises(RuleViolation, match=r"settings: unknown key 'colour'"):
        TournamentSettings.from_json({"colour": "red"})
    with pytest.raises(RuleViolation, match=r"prize_places must be an integer"):
        TournamentSettings.from_json({"prize_places": "3"})
    with pytest.raises(RuleViolation, match=r"venue_zone: unknown time zone"):
        TournamentSettings(venue_zone="Mars/Olympus")
