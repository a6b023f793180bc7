"""A Super 9 spin keyed by a desk with no feed (the CLI on the host) reaches the signs
through the database's change feed (issue 24); the reader's own publishing writes no
change, so it never wakes itself."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.super9.desk import Super9Desk
from gateway.web.change_reader import ChangeReader
from gateway.web.fanout import FanoutFeed
from storage import change_feed
from storage.db import make_sessionmaker

from .conftest import WED, at, key_in


async def test_a_spin_by_a_desk_without_a_feed_reaches_the_board(
    engine: AsyncEngine, desk: Super9Desk
) -> None:
    del desk  # its players only
    sessions = make_sessionmaker(engine)
    cli = Super9Desk(sessions)  # no feed: as `reelgate super9 …` on the host
    await cli.sell("A", "C1", actor="cashier", now=at(WED, 10))
    sid = await key_in(cli, "A", "1 2 3 4 5 6 7 8 9", actor="grd", now=at(WED, 18))
    await cli.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    async with sessions() as db:
        last = await change_feed.last_id(db)
    feed = FanoutFeed()
    reader = ChangeReader(sessions, feed)
    reader.last = last
    assert await reader.step() == 0
    await cli.record_result(sid, 1, 7, now=at(WED, 19, 5))  # S9-12: a wheel result
    assert await reader.step() > 0
    draw = feed.retained()[f"super9/{sid}/draw"]
    assert draw["called"] == [7]
    assert draw["last"] == {"number": 7, "game": 1}
    assert "super9/jackpot" in feed.retained()
    assert await reader.step() == 0  # its own publish changed nothing watched
