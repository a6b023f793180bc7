"""Ranking queries against a pure-Python reference (T2, T13, T14, T16, T17, T19).

Clauses: docs/rules.md#t2, #t13, #t14, #t16, #t17, #t19.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from gateway.tournament.rules.ranking import TieGroup
from gateway.tournament.services.live_standings import (
    Cut,
    Standings,
    cut,
    qualifier_cut,
    standings,
)
from storage.db import make_sessionmaker
from storage.testing import T0, Builder
from storage.tournament import (
    CardDraw,
    CardSuit,
    Disqualification,
    DrawMethod,
    DrawnBy,
    Entry,
    EntryStatus,
    Exclusion,
    ExclusionKind,
    Player,
    Score,
    Stage,
)

AS_OF = T0 + timedelta(days=1)


# ---------------------------------------------------------------- pure reference


@dataclass(frozen=True)
class Result:
    entry_id: int
    player_id: int
    credits: int


def reference(
    results: Sequence[Result],
    draws: Mapping[tuple[int, int, int], int],
    limit: int,
) -> tuple[list[tuple[int, int, bool, int]], list[tuple[int, int, tuple[int, ...], int]]]:
    """(entry, place, tied, credits) rows and (place, credits, entries, next round) ties.

    ``results`` are the eligible ones; ``draws`` maps (entry, credits, round) -> card.
    """
    ordered = sorted(results, key=lambda r: -r.credits)
    floor = ordered[limit - 1].credits if len(ordered) >= limit else -1
    top = [r for r in ordered if r.credits >= floor]
    rows: list[tuple[int, int, bool, int]] = []
    ties: list[tuple[int, int, tuple[int, ...], int]] = []
    for credits in sorted({r.credits for r in top}, reverse=True):
        pending: list[tuple[list[int], int]] = [
            (sorted(r.entry_id for r in top if r.credits == credits), 1)
        ]
        while pending:  # depth-first, best cards first (T19)
            members, rnd = pending.pop(0)
            cards = [draws.get((m, credits, rnd)) for m in members]
            if len(members) == 1 or None in cards:
                place = len(rows) + 1
                if len(members) > 1:
                    ties.append((place, credits, tuple(members), rnd))
                rows.extend((m, place, len(members) > 1, credits) for m in members)
                continue
            values = sorted(set(cards), key=lambda v: -(v or 0))
            pending[:0] = [
                ([m for m, c in zip(members, cards, strict=True) if c == v], rnd + 1)
                for v in values
            ]
    return rows, ties


def reference_cut(
    rows: list[tuple[int, int, bool, int]],
    ties: list[tuple[int, int, tuple[int, ...], int]],
    sizes: Sequence[int],
) -> tuple[list[list[int]], list[tuple[int, ...]]]:
    bounds = [sum(sizes[: i + 1]) for i in range(len(sizes))]
    blocking: list[tuple[int, ...]] = []
    for b in bounds:
        for place, _c, members, _r in ties:
            if place <= b < place + len(members) - 1 and members not in blocking:
                blocking.append(members)
    held = {m for members in blocking for m in members}
    groups = []
    low = 0
    for b in bounds:
        groups.append([e for e, place, _t, _c in rows if low < place <= b and e not in held])
        low = b
    return groups, blocking


def flatten(table: Standings) -> list[tuple[int, int, bool, int]]:
    return [(r.entry_id, r.place, r.tied, r.credits) for r in table.rows]


def flatten_ties(ties: Sequence[TieGroup]) -> list[tuple[int, int, tuple[int, ...], int]]:
    return [(t.place, t.credits, t.entry_ids, t.next_round) for t in ties]


def flatten_cut(result: Cut) -> tuple[list[list[int]], list[tuple[int, ...]]]:
    return [[r.entry_id for r in g] for g in result.groups], [t.entry_ids for t in result.pending]


# ---------------------------------------------------------------- fixtures


@pytest.fixture
async def session(engine: AsyncEngine) -> AsyncIterator[AsyncSession]:
    async with make_sessionmaker(engine)() as s:
        yield s
        await s.rollback()


@pytest.fixture
async def b(session: AsyncSession) -> Builder:
    builder = Builder(session)
    await builder.make_tournament(semi_final_size=3)
    return builder


async def draw(
    b: Builder, score: Score, rnd: int, rank: int, *, credits: int | None = None
) -> None:
    b.session.add(
        CardDraw(
            tournament_id=b.t.id, stage=score.stage,
            tie_credits=score.final_credits if credits is None else credits, round=rnd,
            entry_id=score.entry_id, player_id=score.player_id, drawn_by=DrawnBy.PLAYER,
            card_rank=rank, card_suit=CardSuit.SPADES, method=DrawMethod.PHYSICAL,
            context=f"tie at {score.final_credits}", recorded_by="director:anna",
        )
    )  # fmt: skip
    await b.session.flush()


# ---------------------------------------------------------------- examples


async def test_single_entries_rank_not_players_rule_14(b: Builder) -> None:
    ann, ben = await b.player("Ann"), await b.player("Ben")
    s1 = await b.played(ann, 5000, heat_no=1)
    s2 = await b.played(ben, 4000, heat_no=1)
    s3 = await b.played(ann, 3000, heat_no=2)  # Ann's second entry holds its own place
    table = await standings(b.session, b.t.id, as_of=AS_OF)
    assert [(r.entry_id, r.place, r.player_id) for r in table.rows] == [
        (s1.entry_id, 1, ann.id),
        (s2.entry_id, 2, ben.id),
        (s3.entry_id, 3, ann.id),
    ]
    assert table.ties == ()


async def test_stages_are_ranked_apart(b: Builder) -> None:
    p = await b.player()
    qual = await b.played(p, 100)
    semi = await b.seat(await b.session.get(Entry, qual.entry_id), await b.heat(Stage.SEMI_FINAL))  # type: ignore[arg-type]
    await b.score(semi, 900)
    q = await standings(b.session, b.t.id, Stage.QUALIFYING, as_of=AS_OF)
    s = await standings(b.session, b.t.id, Stage.SEMI_FINAL, as_of=AS_OF)
    assert [r.credits for r in q.rows] == [100]
    assert [r.credits for r in s.rows] == [900]


async def test_disqualified_entries_and_players_are_left_out_rule_2(b: Builder) -> None:
    cheat, barred, fine = await b.player(), await b.player(), await b.player()
    s_cheat = await b.played(cheat, 9000, heat_no=1)
    await b.played(barred, 8000, heat_no=1)
    await b.played(barred, 7500, heat_no=2)
    s_fine = await b.played(fine, 7000, heat_no=1)
    entry = await b.session.get(Entry, s_cheat.entry_id)
    assert entry is not None
    entry.status = EntryStatus.DISQUALIFIED  # T20: negligence
    dq = Disqualification(
        tournament_id=b.t.id, player_id=barred.id, rule="2", reason="refusal of entry order",
        decided_by="director:anna",
    )  # fmt: skip
    b.session.add(dq)
    await b.session.flush()
    table = await standings(b.session, b.t.id, as_of=AS_OF)
    assert [r.entry_id for r in table.rows] == [s_fine.entry_id]
    # Revoked (T23 decision): the player's entries are back in.
    dq.revoked_at, dq.revoked_by = AS_OF, "director:anna"
    await b.session.flush()
    table = await standings(b.session, b.t.id, as_of=AS_OF)
    assert [r.credits for r in table.rows] == [8000, 7500, 7000]


async def test_exclusion_register_hides_player_rule_2(b: Builder) -> None:
    p, q = await b.player(), await b.player()
    await b.played(p, 500)
    await b.played(q, 400)

    async def exclude(player: Player, start: timedelta, end: timedelta | None) -> None:
        b.session.add(
            Exclusion(
                kind=ExclusionKind.SELF_EXCLUSION, id_number=player.id_number,
                valid_from=T0 + start, valid_until=None if end is None else T0 + end,
                source="csv:register.csv", created_by="compliance:lerato",
            )
        )  # fmt: skip
        await b.session.flush()

    # An exclusion that ended before the heat does not matter.
    await exclude(p, -timedelta(days=30), -timedelta(days=1))
    assert [r.credits for r in (await standings(b.session, b.t.id, as_of=AS_OF)).rows] == [500, 400]
    # Self-excluded during the tournament, after playing: out (T2 "during").
    await exclude(p, timedelta(hours=2), None)
    assert [r.credits for r in (await standings(b.session, b.t.id, as_of=AS_OF)).rows] == [400]
    # ...but not in a standings view as of before the exclusion began.
    early = await standings(b.session, b.t.id, as_of=T0 + timedelta(hours=1))
    assert [r.credits for r in early.rows] == [500, 400]


async def test_ties_are_broken_only_by_card_draws_rule_19(b: Builder) -> None:
    players = [await b.player() for _ in range(3)]
    top = await b.played(players[0], 800)
    s1 = await b.played(players[1], 600)
    s2 = await b.played(players[2], 600)
    s3 = await b.played(players[0], 600, heat_no=2)
    table = await standings(b.session, b.t.id, as_of=AS_OF)
    assert [(r.place, r.tied) for r in table.rows] == [(1, False), (2, True), (2, True), (2, True)]
    assert flatten_ties(table.ties) == [
        (2, 600, tuple(sorted((s1.entry_id, s2.entry_id, s3.entry_id))), 1)
    ]
    # Round 1 half drawn: still tied, nothing guessed.
    await draw(b, s1, 1, 12)
    await draw(b, s2, 1, 12)
    table = await standings(b.session, b.t.id, as_of=AS_OF)
    assert table.ties[0].next_round == 1
    assert len(table.ties[0].entry_ids) == 3
    # Round 1 complete: the Ace (low) is last; the two Queens go to round 2.
    await draw(b, s3, 1, 1)
    table = await standings(b.session, b.t.id, as_of=AS_OF)
    assert [(r.entry_id, r.place) for r in table.rows][-1] == (s3.entry_id, 4)
    assert flatten_ties(table.ties) == [(2, 600, tuple(sorted((s1.entry_id, s2.entry_id))), 2)]
    await draw(b, s2, 2, 13)
    await draw(b, s1, 2, 2)
    table = await standings(b.session, b.t.id, as_of=AS_OF)
    assert [r.entry_id for r in table.rows] == [top.entry_id, s2.entry_id, s1.entry_id, s3.entry_id]
    assert [r.place for r in table.rows] == [1, 2, 3, 4]
    assert table.ties == ()


async def test_draws_for_an_old_score_do_not_apply(b: Builder) -> None:
    p, q = await b.player(), await b.player()
    s1 = await b.played(p, 600)
    s2 = await b.played(q, 600)
    await draw(b, s1, 1, 5, credits=700)  # recorded for a tie at 700 that no longer exists
    await draw(b, s2, 1, 3, credits=700)
    table = await standings(b.session, b.t.id, as_of=AS_OF)
    assert len(table.ties) == 1
    assert table.ties[0].next_round == 1


async def test_top_limit_keeps_the_whole_boundary_tie(b: Builder) -> None:
    for credits in (900, 800, 700, 700, 700, 600):
        await b.played(await b.player(), credits)
    table = await standings(b.session, b.t.id, limit=3, as_of=AS_OF)
    assert [r.credits for r in table.rows] == [900, 800, 700, 700, 700]
    assert table.tie_straddling(3) is not None


async def test_qualifier_cut_rules_13_14(b: Builder) -> None:
    # semi_final_size = 3 in this tournament: 1 to the final, the next 3 to semis.
    scores = [await b.played(await b.player(), c) for c in (990, 900, 800, 700, 700, 100)]
    result = await qualifier_cut(b.session, b.t.id, as_of=AS_OF)
    assert [r.entry_id for r in result.groups[0]] == [scores[0].entry_id]  # T13
    assert [r.entry_id for r in result.groups[1]] == [scores[1].entry_id, scores[2].entry_id]
    assert not result.complete
    (tie,) = result.pending  # the 700 tie straddles place 4/5: draw needed (T19)
    assert tie.entry_ids == (scores[3].entry_id, scores[4].entry_id)
    assert tie.place == 4
    await draw(b, scores[3], 1, 4)
    await draw(b, scores[4], 1, 9)
    result = await qualifier_cut(b.session, b.t.id, as_of=AS_OF)
    assert result.complete
    assert [r.entry_id for r in result.groups[1]] == [
        scores[1].entry_id, scores[2].entry_id, scores[4].entry_id,
    ]  # fmt: skip


async def test_tie_for_first_blocks_the_direct_final_place(b: Builder) -> None:
    a, c = await b.player(), await b.player()
    s1 = await b.played(a, 990)
    s2 = await b.played(c, 990)
    s3 = await b.played(a, 500, heat_no=2)
    result = await qualifier_cut(b.session, b.t.id, as_of=AS_OF)
    assert result.groups[0] == ()
    assert [r.entry_id for r in result.groups[1]] == [s3.entry_id]
    assert [t.entry_ids for t in result.pending] == [(s1.entry_id, s2.entry_id)]


async def test_semi_final_quota_rule_17(b: Builder) -> None:
    p = [await b.player() for _ in range(3)]
    semis = []
    for i, credits in enumerate((300, 500, 400)):
        (entry,) = await b.entries(p[i])
        seat = await b.seat(entry, await b.heat(Stage.SEMI_FINAL, 1))
        semis.append(await b.score(seat, credits))
    result = await cut(b.session, b.t.id, Stage.SEMI_FINAL, [2], as_of=AS_OF)
    assert [r.credits for r in result.groups[0]] == [500, 400]


async def test_bad_arguments(b: Builder) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        await standings(b.session, b.t.id, limit=0)
    with pytest.raises(ValueError):  # noqa: PT011
        await cut(b.session, b.t.id, Stage.QUALIFYING, [1, 0])
    with pytest.raises(LookupError):
        await qualifier_cut(b.session, 10**9)


# ---------------------------------------------------------------- property


@dataclass(frozen=True)
class Scenario:
    entries: list[tuple[int, int]]  # (player index, credits) per entry
    players: int
    cards: list[list[int]]  # per entry: card ranks drawn in rounds 1, 2, ...
    undrawn: set[int]  # entries whose cards are not recorded (yet)
    stale: set[int]  # entries with a draw recorded for a different (old) score
    dq_entries: set[int]  # entry status 'disqualified'
    dq_entry_rows: set[int]  # a disqualification row for the entry alone (T20)
    dq_players: set[int]
    revoked_players: set[int]  # disqualified, then revoked (T23)
    excluded: set[int]  # on the exclusion register (T2)
    limit: int
    sizes: list[int]


@st.composite
def scenarios(draw_: st.DrawFn) -> Scenario:
    n = draw_(st.integers(1, 14))
    players = draw_(st.integers(1, 6))
    return Scenario(
        entries=[
            (draw_(st.integers(0, players - 1)), draw_(st.sampled_from([0, 10, 20])))
            for _ in range(n)
        ],
        players=players,
        # Few card values, so equal cards and further rounds are common.
        cards=[draw_(st.lists(st.integers(1, 4), min_size=1, max_size=3)) for _ in range(n)],
        undrawn=draw_(st.sets(st.integers(0, n - 1), max_size=2)),
        stale=draw_(st.sets(st.integers(0, n - 1), max_size=2)),
        dq_entries=draw_(st.sets(st.integers(0, n - 1), max_size=3)),
        dq_entry_rows=draw_(st.sets(st.integers(0, n - 1), max_size=2)),
        dq_players=draw_(st.sets(st.integers(0, players - 1), max_size=2)),
        revoked_players=draw_(st.sets(st.integers(0, players - 1), max_size=2)),
        excluded=draw_(st.sets(st.integers(0, players - 1), max_size=2)),
        limit=draw_(st.integers(1, n + 2)),
        sizes=draw_(st.lists(st.integers(1, 5), min_size=1, max_size=3)),
    )


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sc=scenarios())
async def test_standings_match_reference(engine: AsyncEngine, sc: Scenario) -> None:
    async with make_sessionmaker(engine)() as session:
        b = Builder(session)
        await b.make_tournament()
        people = [await b.player() for _ in range(sc.players)]
        scores = [
            await b.played(people[pi], credits, heat_no=i + 1)
            for i, (pi, credits) in enumerate(sc.entries)
        ]
        for i in sc.dq_entries:
            entry = await session.get(Entry, scores[i].entry_id)
            assert entry is not None
            entry.status = EntryStatus.DISQUALIFIED
        for i in sc.dq_entry_rows:
            session.add(
                Disqualification(
                    tournament_id=b.t.id, player_id=scores[i].player_id,
                    entry_id=scores[i].entry_id, rule="20", reason="negligence",
                    decided_by="director:anna",
                )
            )  # fmt: skip
        for pi in sc.dq_players | sc.revoked_players:
            revoked = pi not in sc.dq_players
            session.add(
                Disqualification(
                    tournament_id=b.t.id, player_id=people[pi].id, rule="3", reason="staff",
                    decided_by="director:anna", revoked_at=AS_OF if revoked else None,
                    revoked_by="director:anna" if revoked else None,
                )
            )  # fmt: skip
        for pi in sc.excluded:
            session.add(
                Exclusion(
                    kind=ExclusionKind.REFUSAL_OF_ENTRY, id_number=people[pi].id_number,
                    valid_from=T0 - timedelta(days=9), source="manual", created_by="compliance",
                )
            )  # fmt: skip
        draws: dict[tuple[int, int, int], int] = {}
        for i, s in enumerate(scores):
            for rnd, rank in enumerate(sc.cards[i], start=1):
                if i not in sc.undrawn:
                    await draw(b, s, rnd, rank)
                    draws[(s.entry_id, s.final_credits, rnd)] = rank
                if i in sc.stale:  # a draw for a score this entry no longer has: ignored
                    await draw(b, s, rnd, 5 - rank, credits=s.final_credits + 5)
        await session.flush()

        out_players = {people[pi].id for pi in sc.dq_players | sc.excluded}
        out_entries = {scores[i].entry_id for i in sc.dq_entries | sc.dq_entry_rows}
        eligible = [
            Result(s.entry_id, s.player_id, s.final_credits)
            for s in scores
            if s.entry_id not in out_entries and s.player_id not in out_players
        ]
        table = await standings(session, b.t.id, limit=sc.limit, as_of=AS_OF)
        want_rows, want_ties = reference(eligible, draws, sc.limit) if eligible else ([], [])
        assert flatten(table) == want_rows
        assert flatten_ties(table.ties) == want_ties
        by_entry = {s.entry_id: s for s in scores}
        assert all(by_entry[r.entry_id].player_id == r.player_id for r in table.rows)

        got_cut = await cut(session, b.t.id, Stage.QUALIFYING, sc.sizes, as_of=AS_OF)
        ref_rows, ref_ties = reference(eligible, draws, sum(sc.sizes)) if eligible else ([], [])
        assert flatten_cut(got_cut) == reference_cut(ref_rows, ref_ties, sc.sizes)
        await session.rollback()
