"""The console's home page, the "Tonight" board (issue 26, item 6): the venue's night
(06:00 to 06:00 in its zone) with its heats, seats filled and the countdown to the next,
banks and machines in trouble, approvals this account may decide or asked for, prizes
still to pay (T15) and the newest audit rows, each part only for a role allowed to read
it; its fragment for the live refresh; read-only; the first-run panel and the tiles
kept below."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select

from gateway.accounts import service
from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role, allowed
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import HeatStatus, Stage
from gateway.tournament.services.prizes import set_schedule
from gateway.tournament.settings import TournamentSettings
from gateway.web.console.tonight import countdown, night_of
from storage.audit import AuditEntry
from storage.prizes import PrizePayout
from tests.gateway.web.api.conftest import NOW

from .conftest import Desk, signed_in

ZONE = ZoneInfo("Africa/Johannesburg")
PARTS: dict[str, P | None] = {
    "tonight-heats": P.HEAT_READ,
    "tonight-banks": P.BANK_READ,
    "tonight-trouble": P.BANK_READ,
    "tonight-approvals": None,
    "tonight-prizes": P.TOURNAMENT_READ,
    "tonight-audit": P.AUDIT_READ,
}


def _parts(html: str) -> set[str]:
    return set(re.findall(r'<section class="card" id="(tonight-[a-z]+)"', html))


def test_the_night_runs_from_six_to_six_in_the_venue_zone() -> None:
    evening = datetime(2026, 11, 20, 23, 30, tzinfo=ZONE)
    start, end = night_of(evening, ZONE)
    assert (start, end) == (
        datetime(2026, 11, 20, 6, tzinfo=ZONE),
        datetime(2026, 11, 21, 6, tzinfo=ZONE),
    )
    assert night_of(datetime(2026, 11, 21, 5, 59, tzinfo=ZONE), ZONE)[0] == start  # after midnight
    assert night_of(datetime(2026, 11, 21, 6, 0, tzinfo=ZONE), ZONE)[0] == end
    # The same instant in UTC is the same night (the venue's zone decides, not the host's).
    assert night_of(evening.astimezone(ZoneInfo("UTC")), ZONE) == (start, end)


def test_the_countdown_says_hours_minutes_seconds_then_due() -> None:
    assert countdown(NOW + timedelta(hours=3, seconds=5), NOW) == "in 3:00:05"
    assert countdown(NOW + timedelta(minutes=2), NOW) == "in 0:02:00"
    assert countdown(NOW, NOW) == "due now"
    assert countdown(NOW - timedelta(minutes=1), NOW) == "due now"


@pytest.mark.parametrize("role", list(Role))
async def test_each_role_sees_exactly_its_parts(desk: Desk, role: Role) -> None:
    want = {part for part, p in PARTS.items() if p is None or allowed(role, p)}
    async with signed_in(desk, role.value) as client:
        home = await client.get("/console/")
        fragment = await client.get("/console/tonight/fragment")
    assert home.status_code == fragment.status_code == 200
    assert _parts(home.text) == want
    assert _parts(fragment.text) == want
    assert "<html" not in fragment.text  # the board alone, swapped into the page
    assert 'class="tiles"' in home.text  # the tiles stay, below the board
    assert home.text.index('id="tonight"') < home.text.index('class="tiles"')


async def _seed_tonight(desk: Desk) -> dict[str, int]:
    """Tonight (the 20th from 06:00): the desk's closed heat at 08:00, a heat at 13:00 with
    two seats filled, one at 05:00 the next morning (still tonight), one at 07:00 (not);
    tournament Winter, its qualifying stage played yesterday, with two prize places, one
    paid; a reinstatement the director asked for."""
    ids: dict[str, int] = {}
    async with svc.unit_of_work(desk.sessions) as s:
        tid = desk.ids["tournament"]
        for key, hours in (("evening", 3), ("late", 19), ("tomorrow", 21)):
            heat = await svc.schedule_heat(
                s, tid, stage=Stage.QUALIFYING, starts_at=NOW + timedelta(hours=hours),
                bank_name="A", duration_seconds=600, starting_credits=1000, actor="director",
                now=NOW,
            )  # fmt: skip
            ids[key] = heat.id
        for key in ("p1", "p2"):
            sale = await svc.sell_entries(s, tid, desk.ids[key], cashier="c", now=NOW)
            await svc.register_for_heat(
                s, ids["evening"], desk.ids[key], actor="desk", now=NOW, entry_id=sale.entry_ids[0]
            )
        winter = await svc.create_tournament(s, "Winter", TournamentSettings(), actor="director")
        played = await svc.schedule_heat(
            s, winter.id, stage=Stage.QUALIFYING, starts_at=NOW - timedelta(days=1),
            bank_name="A", duration_seconds=600, starting_credits=1000, actor="director",
            now=NOW - timedelta(days=2),
        )  # fmt: skip
        played.status = HeatStatus.CLOSED  # Winter's qualifying stage is over
        await set_schedule(
            s, winter.id, Stage.QUALIFYING, {1: 50_000, 2: 20_000}, actor="director", now=NOW
        )
        winner = await svc.sell_entries(s, winter.id, desk.ids["p2"], cashier="c", now=NOW)
        s.add(PrizePayout(
            tournament_id=winter.id, stage=Stage.QUALIFYING, place=2,
            entry_id=winner.entry_ids[0], player_id=desk.ids["p2"], amount_cents=20_000,
            signer="7505055123080",
            signature="receipt 7", witness="supervisor", paid_by="cashier", paid_at=NOW,
        ))  # fmt: skip
        director = next(u for u in await service.list_users(s) if u.name == "director")
        pending = await service.request_action(
            s, P.PLAYER_REINSTATE, {"disqualification": desk.ids["disqualification"]},
            by=service.Principal(director.id, director.name, Role.DIRECTOR), now=NOW,
        )  # fmt: skip
        ids["pending"] = pending.id
    return ids


def _row(html: str, attribute: str, key: object) -> str:
    found = re.search(rf'<(tr|li) {attribute}="{key}">(.*?)</\1>', html, re.S)
    assert found is not None, (attribute, key)
    return found.group(2)


async def test_the_counts_are_those_of_the_database(desk: Desk) -> None:
    ids = await _seed_tonight(desk)
    async with signed_in(desk, "director") as client:
        html = (await client.get("/console/")).text
    heats = re.findall(r'data-tonight-heat="(\d+)"', html)
    assert heats == [str(desk.ids["done_heat"]), str(ids["evening"]), str(ids["late"])]
    assert re.sub(r"\s+", " ", _row(html, "data-tonight-heat", ids["evening"])).count("2 / ") == 1
    assert "1 / " in _row(html, "data-tonight-heat", desk.ids["done_heat"])  # its one seat
    assert "0 / " in _row(html, "data-tonight-heat", ids["late"])
    # The next heat to start, counted down from the server's own clock.
    assert re.search(r'data-countdown-to="2026-11-20T13:00:00\+02:00"', html)
    assert f'data-server-now="{NOW.isoformat()}"' in html
    assert ">in 3:00:00</time>" in html
    # Bank A enabled, its door-opened machine in trouble (the floor map's reading).
    assert "enabled" in _row(html, "data-tonight-bank", "A")
    assert re.findall(r'data-tonight-machine="([^"]+)"', html) == ["A02"]
    assert "marked: door-opened" in _row(html, "data-tonight-machine", "A02")
    # Qualifying over: place 1 unpaid (nobody holds it outright), place 2 paid.
    assert re.findall(r'data-tonight-prize="([^"]+)"', html) == ["Winter qualifying 1"]
    assert "R 500.00" in _row(html, "data-tonight-prize", "Winter qualifying 1")
    # The director asked: theirs, waiting for a second person.
    assert "yours" in _row(html, "data-tonight-pending", ids["pending"])
    async with desk.sessions() as s:
        newest = await s.scalar(
            select(func.max(AuditEntry.id)).where(AuditEntry.action == "dual.request")
        )
    assert f'data-tonight-audit="{newest}"' in html  # the reinstatement asked for
    assert "records.seal" not in html  # the chain's own seal rows are not changes


@pytest.mark.parametrize(
    ("account", "shown"),
    [("director", "yours"), ("director2", "you may decide"), ("supervisor", "you may decide"),
     ("cashier", None), ("auditor", None)],
)  # fmt: skip
async def test_approvals_are_those_the_account_may_decide_or_asked_for(
    desk: Desk, account: str, shown: str | None
) -> None:
    ids = await _seed_tonight(desk)
    async with signed_in(desk, account) as client:
        html = (await client.get("/console/tonight/fragment")).text
    if shown is None:
        assert "data-tonight-pending" not in html
        assert "Nothing for you." in html
    else:
        assert shown in _row(html, "data-tonight-pending", ids["pending"])


async def test_the_board_writes_nothing(desk: Desk) -> None:
    async def audit_rows() -> int:
        async with desk.sessions() as s:
            return await s.scalar(select(func.count()).select_from(AuditEntry)) or 0

    async with signed_in(desk, "director") as client:
        before = await audit_rows()
        for path in ("/console/", "/console/tonight/fragment"):
            assert (await client.get(path)).status_code == 200
        assert await audit_rows() == before
        refused = await client.post("/console/tonight/fragment", data={})
        assert refused.status_code == 405


async def test_anonymous_is_sent_to_sign_in(desk: Desk) -> None:
    for path in ("/console/", "/console/tonight/fragment"):
        r = await desk.client.get(path)
        assert r.status_code == 303
        assert r.headers["location"] == f"/console/login?next={path}"


async def test_with_no_heat_left_tonight_the_next_one_is_still_counted_down(desk: Desk) -> None:
    # The desk's heat of tonight is closed; its next heat is tomorrow at 10:00.
    async with signed_in(desk, "cashier") as client:
        html = (await client.get("/console/")).text
    assert re.findall(r'data-tonight-heat="(\d+)"', html) == [str(desk.ids["done_heat"])]
    found = re.search(r'<p class="next-heat" id="next-heat">(.*?)</p>', html, re.S)
    assert found is not None
    assert "(not tonight)" in found.group(1)
    assert ">in 24:00:00</time>" in found.group(1)
    assert '<span data-f="seats">0 / 3</span>' in found.group(1)
