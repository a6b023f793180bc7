"""A manual score from the console (T23, dual control; issue 26): the director keys in
the score of a seat of a closed heat, with the reason; nothing is stored until a second
person, a director or supervisor other than the asker, approves it on Approvals; then
the score stands in the standings, stored under the asker's name, and the audit log has
the request under the asker and the approval under the approver.  The form is the API's
``POST /seats/{key}/manual-score`` on the same permission, model and dual-control
request; a refusal is one line naming the field (422) that changes nothing; the roles
without ``heat.manual-score`` get 403, as over the API."""

from __future__ import annotations

import re
from collections.abc import Mapping

import httpx
import pytest
from sqlalchemy import func, select

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role, allowed
from storage.accounts import PendingAction
from storage.audit import AuditEntry
from storage.tournament import Score

from .conftest import Desk, csrf_of, playing_pair, signed_in


def _page(desk: Desk, heat: str = "done_heat") -> str:
    return f"/console/heats/{desk.ids[heat]}/score"


async def _ask(
    client: httpx.AsyncClient, desk: Desk, data: Mapping[str, str], heat: str = "done_heat"
) -> httpx.Response:
    """The score form of Thandi's seat (the closed heat's), posted with the page's token."""
    seat = str(desk.ids["scored_seat"])
    page = await client.get(_page(desk, heat), params={"seat": seat})
    assert page.status_code == 200, page.text
    form = {"seat": seat, "credits": "1234", "reason": "meter read by hand", **data}
    return await client.post(_page(desk, heat), data={**form, "csrf": csrf_of(page.text)})


async def _writes(desk: Desk) -> int:
    """Audit rows of scores and dual control (sign-ins have their own)."""
    writes = AuditEntry.action.startswith("score.") | AuditEntry.action.startswith("dual.")
    async with desk.sessions() as s:
        return await s.scalar(select(func.count()).select_from(AuditEntry).where(writes)) or 0


async def _scores(desk: Desk) -> list[tuple[int, int, str, str | None]]:
    async with desk.sessions() as s:
        rows = await s.scalars(select(Score).order_by(Score.id))
        return [(r.seat_id, r.final_credits, r.source.value, r.recorded_by) for r in rows]


async def _pending(desk: Desk) -> list[PendingAction]:
    async with desk.sessions() as s:
        return list((await s.scalars(select(PendingAction))).all())


async def _approve(client: httpx.AsyncClient, pending: int) -> httpx.Response:
    approvals = await client.get("/console/pending")
    return await client.post(
        f"/console/pending/{pending}/approve", data={"csrf": csrf_of(approvals.text)}
    )


async def test_t23_a_manual_score_stands_only_once_a_second_person_approves(desk: Desk) -> None:
    """T23: the director opens the closed heat on the bank's page, follows the seat's
    "Manual score", asks for 1234 credits with the reason; it waits (nothing stored); the
    director cannot approve their own, a dealer may not; the supervisor approves; the
    score is Thandi's in the standings, stored under the director's name, audited under
    both accounts."""
    seat = desk.ids["scored_seat"]
    async with signed_in(desk, "director") as director:
        bank = await director.get("/console/heat/A", params={"heat": desk.ids["done_heat"]})
        assert f'href="/console/heat/A?heat={desk.ids["done_heat"]}"' in bank.text  # played
        link = f'href="/console/heats/{desk.ids["done_heat"]}/score?seat={seat}"'
        assert link in bank.text
        r = await _ask(director, desk, {"credits": "1234", "games_played": "80",
                                        "games_won": "20"})  # fmt: skip
        assert r.status_code == 303, r.text
        waiting = await director.get(r.headers["location"])
        assert "manual score of seat 1 (Thandi Mokoena) asked (action" in waiting.text
        assert "it waits for a second person to approve it on Approvals (rule 23)" in waiting.text
        assert "1234 asked by director" in waiting.text
        (pending,) = await _pending(desk)
        assert (pending.kind, pending.payload_dict()["credits"]) == ("heat.manual-score", 1234)
        assert await _scores(desk) == []  # not yet: it waits for the second person
        own = await _approve(director, pending.id)
    assert own.status_code == 422
    assert "a second person must approve; the requester cannot approve" in own.text
    async with signed_in(desk, "dealer") as dealer:
        r = await _approve(dealer, pending.id)
    assert r.status_code == 422
    assert "must be approved by director, supervisor" in r.text
    assert await _scores(desk) == []
    async with signed_in(desk, "supervisor") as supervisor:
        r = await _approve(supervisor, pending.id)
        assert r.status_code == 303, r.text
        assert "approved by supervisor" in (await supervisor.get(r.headers["location"])).text
        standings = await supervisor.get(
            "/console/standings", params={"t": desk.ids["tournament"], "stage": "qualifying"}
        )
    assert await _scores(desk) == [(seat, 1234, "manual", "director")]
    row = re.search(r'<tr[^>]*data-entry="\d+">(.*?)</tr>', standings.text, re.S)
    assert row is not None
    assert "Thandi Mokoena" in row.group(1)
    assert '<td class="num credits">1234</td>' in row.group(1)
    async with desk.sessions() as s:
        audited = (
            await s.execute(
                select(AuditEntry.action, AuditEntry.actor)
                .where(AuditEntry.action.in_(["dual.request", "dual.approve", "score.manual"]))
                .order_by(AuditEntry.id)
            )
        ).all()
        manual = await s.scalar(select(AuditEntry).where(AuditEntry.action == "score.manual"))
    assert [tuple(a) for a in audited] == [
        ("dual.request", "director"), ("dual.approve", "supervisor"), ("score.manual", "director"),
    ]  # fmt: skip
    assert manual is not None
    assert (manual.subject, manual.reason) == (f"seat:{seat}", "meter read by hand")


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"credits": ""}, "credits: a whole number, digits 0-9 only (at most 18)"),
        ({"credits": "12a"}, "credits: a whole number, digits 0-9 only (at most 18)"),
        ({"credits": "-5"}, "credits: a whole number, digits 0-9 only (at most 18)"),
        ({"credits": "１２"}, "credits: a whole number, digits 0-9 only (at most 18)"),
        ({"credits": "1" * 19}, "credits: a whole number, digits 0-9 only (at most 18)"),
        ({"games_played": "4.5"}, "games_played: a whole number, digits 0-9 only (at most 18)"),
        ({"games_played": "2", "games_won": "3"},
         "games_won: rule 12: games_won cannot exceed games_played"),
        ({"reason": ""}, "reason: say why (it is in the record with the score, rule 23)"),
        ({"reason": "   "}, "reason: say why (it is in the record with the score, rule 23)"),
        ({"seat": "999"}, "seat: pick a seat of qualifying heat 1"),
        ({"seat": "x"}, "seat: pick a seat of qualifying heat 1"),
    ],
)  # fmt: skip
async def test_t23_a_refused_manual_score_changes_nothing(
    desk: Desk, fields: dict[str, str], line: str
) -> None:
    """T23 (T12 for the meters): one line naming the field, 422, nothing asked, stored
    or audited; the form keeps what was typed."""
    before = await _writes(desk)
    async with signed_in(desk, "director") as client:
        r = await _ask(client, desk, fields)
    assert r.status_code == 422, r.text
    assert line in r.text, re.findall(r'role="alert">([^<]*)', r.text)
    assert len(re.findall(r'class="flash error"', r.text)) == 1
    assert await _writes(desk) == before
    assert await _pending(desk) == []
    assert await _scores(desk) == []


async def test_t23_no_manual_score_while_the_heat_is_played(desk: Desk) -> None:
    """T23 from the console: a seat of a heat still running is not offered the form, and
    a posted one is refused naming the heat; nothing is asked."""
    async with desk.sessions() as s, s.begin():
        _, seats = await playing_pair(s, desk)
    async with signed_in(desk, "director") as client:
        page = await client.get(_page(desk, "heat"), params={"seat": seats[0].id})
        assert "Manual score<span" not in page.text
        assert 'action="/console/heats/' not in page.text
        csrf = csrf_of(page.text)
        r = await client.post(_page(desk, "heat"), data={
            "seat": str(seats[0].id), "credits": "5", "reason": "x", "csrf": csrf,
        })  # fmt: skip
    assert r.status_code == 422
    assert "heat: rule 23: qualifying heat 2 is running" in r.text
    assert await _pending(desk) == []


@pytest.mark.parametrize("role", list(Role))
async def test_each_role_without_the_permission_gets_403(desk: Desk, role: Role) -> None:
    """As over the API: heat.manual-score is the director's and the supervisor's; the
    page and the form answer 403 naming the permission to every other role, and the
    heat's page shows no "Manual score" to a role that may not (the technician)."""
    may = allowed(role, P.HEAT_MANUAL_SCORE)
    async with signed_in(desk, role.value) as client:
        page = await client.get(_page(desk), params={"seat": desk.ids["scored_seat"]})
        assert page.status_code == (200 if may else 403)
        if not may:
            home = await client.get("/console/")
            r = await client.post(_page(desk), data={
                "seat": str(desk.ids["scored_seat"]), "credits": "5", "reason": "x",
                "csrf": csrf_of(home.text),
            })  # fmt: skip
            for answer in (page, r):
                assert answer.status_code == 403
                assert f"role {role.value} may not heat.manual-score" in answer.text
        if allowed(role, P.HEAT_DIRECT):
            bank = await client.get("/console/heat/A", params={"heat": desk.ids["done_heat"]})
            assert ("Manual score<span" in bank.text) == may
    assert await _pending(desk) == []
    assert await _writes(desk) == 0


async def test_without_a_session_the_screen_asks_to_sign_in(desk: Desk) -> None:
    r = await desk.client.get(_page(desk))
    assert r.status_code == 303
    assert r.headers["location"] == f"/console/login?next={_page(desk)}"
    r = await desk.client.post(_page(desk), data={"seat": "1", "credits": "5"})
    assert (r.status_code, r.headers["location"].startswith("/console/login")) == (303, True)


async def test_an_unknown_heat_is_404(desk: Desk) -> None:
    async with signed_in(desk, "director") as client:
        r = await client.get("/console/heats/999/score")
    assert r.status_code == 404
    assert "heat 999 does not exist" in r.text


async def test_t23_a_supervisor_asks_from_the_schedule_and_a_director_approves(
    desk: Desk,
) -> None:
    """T23: the supervisor (heat.manual-score, no live heat screen) reaches the form from
    the closed heat on the Schedule; a cashier's Schedule has no such link; the director
    approves; the score is stored under the supervisor's name."""
    link = f'href="{_page(desk)}"'
    async with signed_in(desk, "cashier") as cashier:
        week = await cashier.get("/console/schedule")
    assert week.status_code == 200
    assert f'data-heat="{desk.ids["done_heat"]}"' in week.text
    assert link not in week.text
    async with signed_in(desk, "supervisor") as supervisor:
        week = await supervisor.get("/console/schedule")
        assert link in week.text
        r = await _ask(supervisor, desk, {"credits": "900"})
        assert r.status_code == 303, r.text
    (pending,) = await _pending(desk)
    async with signed_in(desk, "director") as director:
        r = await _approve(director, pending.id)
        assert r.status_code == 303, r.text
    assert await _scores(desk) == [(desk.ids["scored_seat"], 900, "manual", "supervisor")]
