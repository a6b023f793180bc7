"""Hot-seat draws on the boards (house clauses HS4, HS5, docs/rules.md): the change reader
publishes a heat's commitment, retained, before the heat, and the revealed seed and the
winning seat once the draws are taken; the seed is never on a board before then."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.tournament.rules.enums import HeatStatus, SeatStatus
from gateway.tournament.services import hotseat as hs
from gateway.web.change_reader import ChangeReader
from gateway.web.fanout import FanoutFeed
from storage.db import make_sessionmaker
from storage.testing import Builder
from storage.tournament import Heat

NOW = datetime(2026, 12, 6, 21, 0, tzinfo=UTC)


async def test_hs4_hs5_commitment_then_seed_and_winner_on_the_boards(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    async with sessions.begin() as session:
        b = Builder(session)
        await b.make_tournament()
        heat = await b.heat()
        for name in ("Ada", "Bo"):
            (entry,) = await b.entries(await b.player(name))
            seat = await b.seat(entry, heat)
            seat.status = SeatStatus.PLAYED
        heat_id = heat.id
    feed = FanoutFeed()
    reader = ChangeReader(sessions, feed, engine=engine, clock=lambda: NOW)
    await reader.start()
    await reader.close()  # stepped by hand below: no timing in this test
    topic = f"heat/{heat_id}/hotseat"
    assert topic not in feed.retained()

    async with sessions.begin() as session:
        row = await hs.commit_heat(
            session, heat_id, draws=1, prize_cents=10000, actor="director", now=NOW
        )
        committed, nonce = row.commitment, row.nonce_hex
        assert row.seed_hex is None  # HS5: the database holds the nonce, not the seed
        seed = hs.keyed_seed(session, bytes.fromhex(nonce), row.subject).hex()
    assert await reader.step() > 0
    board = feed.retained()[topic]
    assert board == {
        "subject": f"heat:{heat_id}",
        "commitment": committed,
        "draws": 1,
        "prize_cents": 10000,
        "seed": None,
        "winners": [],
        "rule": "HS4",
    }
    assert seed not in feed.snapshot_json()  # HS5: not before the close

    async with sessions.begin() as session:
        stored = await session.get(Heat, heat_id)
        assert stored is not None
        stored.status, stored.started_at = HeatStatus.CLOSED, NOW
        (draw,) = await hs.take_heat_draws(session, heat_id, actor="director", now=NOW)
        winner = draw.winner
    assert await reader.step() > 0
    board = json.loads(feed.snapshot_json())["retained"][topic]
    assert board["seed"] == seed
    assert board["rule"] == "HS5"
    assert winner in {"001", "002"}
    machine, player = {"001": ("EGM-001", "Ada"), "002": ("EGM-002", "Bo")}[winner]
    assert board["winners"] == [  # HS5: the seat announced with its machine and player
        {"index": 0, "winner": winner, "prize_cents": 10000, "machine": machine, "player": player}
    ]
