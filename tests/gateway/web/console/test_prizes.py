"""The console's Prizes screen (issue 26, item 5; T15): the director sets a stage's
advertised schedule and apportions its surplus; the cash desk pays a won prize, which
the winner signs for and a second account witnesses by approving it (dual control: the
payer cannot witness their own payout).  Every action is the API's service on the API's
permission and model, audited under the signed-in account; a refusal is one line naming
the field (422) that changes nothing; the other roles get 403, as over the API."""

from __future__ import annotations

import re
from collections.abc import Mapping

import httpx
import pytest
from sqlalchemy import func, select

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role, allowed
from gateway.tournament.rules.enums import Stage
from gateway.tournament.services.prizes import set_schedule
from storage.accounts import PendingAction
from storage.audit import AuditEntry
from storage.prizes import PrizePayout, PrizePlace
from tests.gateway.web.api import director_scenes as scene
from tests.gateway.web.api.conftest import NOW
from tests.gateway.web.api.director_samples import THANDI

from .conftest import Desk, csrf_of, signed_in

PAGE = "/console/prizes"
WRITES = {
    "/console/prizes/schedule": P.TOURNAMENT_PRIZES,
    "/console/prizes/surplus": P.TOURNAMENT_PRIZES,
    "/console/prizes/pay": P.TOURNAMENT_PRIZE_RECEIPT,
}


async def _form(
    client: httpx.AsyncClient, desk: Desk, path: str, data: Mapping[str, str]
) -> httpx.Response:
    """A form of the Prizes page (the Spring tournament's qualifying unless given),
    posted with the page's CSRF token."""
    page = await client.get(PAGE)
    assert page.status_code == 200, page.text
    base = {"tournament": str(desk.ids["tournament"]), "stage": "qualifying"}
    return await client.post(path, data={**base, **data, "csrf": csrf_of(page.text)})


def _flash(html: str) -> list[str]:
    return re.findall(r'class="flash error" role="alert">([^<]*)', html)


async def _writes(desk: Desk) -> int:
    """Audit rows of prize and dual-control writes (sign-ins have their own)."""
    writes = AuditEntry.action.startswith("tournament.prizes") | AuditEntry.action.startswith(
        "dual."
    )
    async with desk.sessions() as s:
        return await s.scalar(select(func.count()).select_from(AuditEntry).where(writes)) or 0


async def _audit(desk: Desk, action: str) -> list[AuditEntry]:
    async with desk.sessions() as s:
        query = select(AuditEntry).where(AuditEntry.action == action).order_by(AuditEntry.id)
        return list((await s.scalars(query)).all())


async def _schedule(desk: Desk) -> list[tuple[str, int, int, int]]:
    async with desk.sessions() as s:
        rows = await s.scalars(select(PrizePlace).order_by(PrizePlace.stage, PrizePlace.place))
        return [(r.stage.value, r.place, r.minimum_cents, r.surplus_cents) for r in rows]


async def _paid(desk: Desk) -> list[PrizePayout]:
    async with desk.sessions() as s:
        return list((await s.scalars(select(PrizePayout))).all())


async def test_the_menu_puts_prizes_after_finals_for_every_reader(desk: Desk) -> None:
    """Issue 26, item 5: "Prizes" follows "Finals" in the menu of a role that may read
    prizes (tournament.read); only the director sees the schedule's forms (T15)."""
    async with signed_in(desk, "cashier") as client:
        home = await client.get("/console/")
        page = await client.get(PAGE)
    assert home.text.index('href="/console/finals"') < home.text.index('href="/console/prizes"')
    assert page.status_code == 200
    assert 'action="/console/prizes/schedule"' not in page.text
    async with signed_in(desk, "director") as client:
        page = await client.get(PAGE)
    assert 'action="/console/prizes/schedule"' in page.text
    assert 'action="/console/prizes/surplus"' in page.text


async def test_the_director_sets_a_schedule_audited_under_the_account(desk: Desk) -> None:
    """T15: the advertised minimum per place, shown in rand; a change needs a reason and
    may only raise or add places."""
    async with signed_in(desk, "director") as client:
        r = await _form(client, desk, "/console/prizes/schedule",
                        {"minimums": "1=500000\n2=250000"})  # fmt: skip
        assert r.status_code == 303, r.text
        assert r.headers["location"].startswith(f"{PAGE}?t={desk.ids['tournament']}&stage=qual")
        page = await client.get(r.headers["location"])
        more = {"minimums": "1=600000, 2=250000, 3=100000", "reason": "sponsor"}
        raised = await _form(client, desk, "/console/prizes/schedule", more)
        assert raised.status_code == 303, raised.text
    assert "qualifying schedule set: 2 prize places (rule 15)" in page.text
    assert "R 5 000.00" in page.text
    assert "R 2 500.00" in page.text
    assert await _schedule(desk) == [
        ("qualifying", 1, 600000, 0), ("qualifying", 2, 250000, 0), ("qualifying", 3, 100000, 0),
    ]  # fmt: skip
    first, second = await _audit(desk, "tournament.prizes.schedule")
    assert (first.actor, second.actor, second.reason) == ("director", "director", "sponsor")


async def test_the_surplus_by_weights_and_by_shares_is_audited(desk: Desk) -> None:
    """T15: management's surplus decision, every cent apportioned (weights: largest
    remainder), under the director's account with the reason."""
    async with signed_in(desk, "director") as client:
        await _form(client, desk, "/console/prizes/schedule", {"minimums": "1=100000 2=50000"})
        r = await _form(client, desk, "/console/prizes/surplus",
                        {"split": "weights", "surplus_cents": "10001", "weights": "2,1",
                         "reason": "larger field"})  # fmt: skip
        assert r.status_code == 303, r.text
        assert [x[3] for x in await _schedule(desk)] == [6667, 3334]
        r = await _form(client, desk, "/console/prizes/surplus",
                        {"split": "shares", "surplus_cents": "3000", "shares": "2=3000",
                         "reason": "second place only"})  # fmt: skip
        page = await client.get(r.headers["location"])
    assert [x[3] for x in await _schedule(desk)] == [0, 3000]
    assert "Surplus R 30.00 apportioned by director" in page.text
    rows = await _audit(desk, "tournament.prizes.surplus")
    assert [(a.actor, a.reason) for a in rows] == [
        ("director", "larger field"), ("director", "second place only"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("path", "fields", "line"),
    [
        ("schedule", {"minimums": "1=500 3=100"},
         "minimums: rule 15: prize places must be 1 to 2, got [1, 3]"),
        ("schedule", {"minimums": "1=500 2=-100"},
         "minimums: place 2: Input should be greater than or equal to 0"),
        ("schedule", {"minimums": "1=500 2=0"},
         "minimums: rule 15: place 2: the advertised prize must be positive"),
        ("schedule", {"minimums": "1=R500"}, "minimums: 1=R500 is not PLACE=CENTS"),
        ("schedule", {"minimums": "1=500 1=600"}, "minimums: Value error, each place once"),
        ("schedule", {"minimums": ""},
         "minimums: Value should have at least 1 item after validation"),
        ("schedule", {"stage": "final", "minimums": "1=4 2=3 3=2 4=1"},
         "minimums: rule 19: 4 prize places but only 3 are strictly ordered"),
        ("schedule", {"stage": "grand", "minimums": "1=5"}, "stage: one of qualifying"),
        ("schedule", {"tournament": "Autumn", "minimums": "1=5"},
         "tournament: pick the tournament"),
        ("surplus", {"split": "shares", "surplus_cents": "1001", "shares": "1=1000",
                     "reason": "more"}, "shares: rule 15: the shares add up to 1000 c"),
        ("surplus", {"split": "shares", "surplus_cents": "-5", "shares": "", "reason": "x"},
         "surplus_cents: Input should be greater than or equal to 0"),
        ("surplus", {"split": "shares", "surplus_cents": "5", "shares": "1=-5", "reason": "x"},
         "shares: place 1: Input should be greater than or equal to 0"),
        ("surplus", {"stage": "final", "split": "shares", "surplus_cents": "5", "shares": "",
                     "reason": "x"},
         "stage: rule 15: the final has no advertised prizes to add to"),
        ("surplus", {"split": "weights", "surplus_cents": "5", "weights": "", "reason": "x"},
         "weights: whole numbers for places 1, 2"),
        ("surplus", {"split": "weights", "surplus_cents": "five", "weights": "1",
                     "reason": "x"}, "surplus_cents: a whole number of cents"),
        ("surplus", {"split": "weights", "surplus_cents": "5", "weights": "1", "reason": ""},
         "reason: String should have at least 1 character"),
    ],
)  # fmt: skip
async def test_a_refused_schedule_or_surplus_changes_nothing(
    desk: Desk, path: str, fields: dict[str, str], line: str
) -> None:
    """T15 (T19 for the final's places): with places 1 and 2 advertised, one line naming
    the field, 422, nothing stored or audited."""
    async with desk.sessions() as s, s.begin():
        await set_schedule(s, desk.ids["tournament"], Stage.QUALIFYING, {1: 500, 2: 250},
                           actor="director", now=NOW)  # fmt: skip
    before, stored = await _writes(desk), await _schedule(desk)
    async with signed_in(desk, "director") as client:
        r = await _form(client, desk, f"/console/prizes/{path}", fields)
    assert r.status_code == 422, r.text
    assert line in r.text, _flash(r.text)
    assert len(re.findall(r'class="flash error"', r.text)) == 1
    assert await _writes(desk) == before
    assert await _schedule(desk) == stored


@pytest.mark.parametrize(
    ("minimums", "reason", "line"),
    [
        ("1=100000", "", "reason: rule 15: a reason is required for this decision"),
        ("1=90000", "budget", "minimums: rule 15: place 1 was advertised at 100000 c"),
    ],
)
async def test_an_advertised_schedule_is_never_lowered(
    desk: Desk, minimums: str, reason: str, line: str
) -> None:
    """T15: the advertised minimum is the least that will be paid; a change needs a reason."""
    await scene.qualifying_over(desk)
    before = await _writes(desk)
    async with signed_in(desk, "director") as client:
        r = await _form(client, desk, "/console/prizes/schedule",
                        {"minimums": minimums, "reason": reason})  # fmt: skip
    assert (r.status_code, line in r.text) == (422, True), r.text
    assert await _writes(desk) == before
    assert await _schedule(desk) == [("qualifying", 1, 100000, 0)]


@pytest.mark.parametrize("role", list(Role))
async def test_each_write_is_refused_to_roles_without_its_permission(
    desk: Desk, role: Role
) -> None:
    """As over the API: the schedule and surplus are tournament.prizes (the director), a
    payout tournament.prize-receipt (cashier, director); 403 names the permission."""
    await scene.qualifying_over(desk)
    before = await _writes(desk)
    async with signed_in(desk, role.value) as client:
        for path, permission in WRITES.items():
            if allowed(role, permission):
                continue
            r = await _form(client, desk, path, {"minimums": "1=200000", "place": "1",
                                                 "signer": THANDI, "signature": "s"})  # fmt: skip
            assert r.status_code == 403, (path, r.status_code)
            assert f"role {role.value} may not {permission.value}" in r.text
    assert await _writes(desk) == before
    assert await _paid(desk) == []


async def test_without_a_session_the_screen_asks_to_sign_in(desk: Desk) -> None:
    r = await desk.client.get(PAGE)
    assert (r.status_code, r.headers["location"]) == (303, "/console/login?next=/console/prizes")
    r = await desk.client.post("/console/prizes/pay", data={"place": "1"})
    assert r.status_code == 303
    assert r.headers["location"].startswith("/console/login")


async def _pending(desk: Desk) -> list[PendingAction]:
    async with desk.sessions() as s:
        return list((await s.scalars(select(PendingAction))).all())


async def test_a_payout_is_paid_only_once_a_second_person_witnesses_it(desk: Desk) -> None:
    """T15: the cashier pays Thandi's place with her signature; it waits for a witness.
    Without one nothing is paid; the payer cannot witness their own payout (nor a dealer,
    whose role may not); a supervisor's approval pays it, witnessed by the supervisor,
    shown with who paid, who witnessed and when, and on a printable slip."""
    await scene.qualifying_over(desk)
    async with signed_in(desk, "cashier") as cashier:
        unpaid = await cashier.get(PAGE)
        assert 'data-unpaid="qualifying:1"' in unpaid.text
        assert "Thandi" in unpaid.text
        assert "R 1 000.00" in unpaid.text
        r = await _form(cashier, desk, "/console/prizes/pay",
                        {"place": "1", "signer": THANDI, "signature": "slip 0042"})  # fmt: skip
        assert r.status_code == 303, r.text
        waiting = await cashier.get(r.headers["location"])
        assert "waits for its witness" in waiting.text
        assert "waiting for the witness: approval" in waiting.text
        (pending,) = await _pending(desk)
        assert "witness" not in pending.payload_dict()  # the payer cannot name one
        assert await _paid(desk) == []  # no witness yet: not paid
        approvals = await cashier.get("/console/pending")
        own = await cashier.post(f"/console/pending/{pending.id}/approve",
                                 data={"csrf": csrf_of(approvals.text)})  # fmt: skip
    assert own.status_code == 422
    assert "a second person must approve; the requester cannot approve" in own.text
    async with signed_in(desk, "dealer") as dealer:
        approvals = await dealer.get("/console/pending")
        r = await dealer.post(f"/console/pending/{pending.id}/approve",
                              data={"csrf": csrf_of(approvals.text)})  # fmt: skip
    assert "must be approved by director, supervisor" in r.text
    assert await _paid(desk) == []
    async with signed_in(desk, "supervisor") as supervisor:
        approvals = await supervisor.get("/console/pending")
        r = await supervisor.post(f"/console/pending/{pending.id}/approve",
                                  data={"csrf": csrf_of(approvals.text)})  # fmt: skip
        assert r.status_code == 303, r.text
        page = await supervisor.get(PAGE)
        slip = await supervisor.get(
            "/console/prizes/slip",
            params={"t": desk.ids["tournament"], "stage": "qualifying", "place": 1},
        )
    (payout,) = await _paid(desk)
    assert (payout.paid_by, payout.witness, payout.signer, payout.amount_cents) == (
        "cashier", "supervisor", THANDI, 100000,
    )  # fmt: skip
    assert "paid by cashier · witness supervisor" in page.text
    assert 'data-unpaid="qualifying:1"' not in page.text
    assert "Nothing to pay" in page.text
    assert slip.status_code == 200
    assert "Witness: supervisor" in slip.text
    assert "R 1 000.00" in slip.text
    assert "receipt slip 0042" in slip.text
    assert "…9087" in slip.text
    # The signer's ID number is the desk's to key, not every role's to read: by its last 4.
    for shown in (page.text, slip.text):
        assert THANDI not in shown
        assert f"signed by …{THANDI[-4:]}" in shown.replace("Signed for by", "signed by")
    (paid,) = await _audit(desk, "tournament.prizes.paid")
    assert (paid.actor, paid.subject) == ("cashier", f"entry:{payout.entry_id}")
    assert [a.actor for a in await _audit(desk, "dual.request")] == ["cashier"]
    assert [a.actor for a in await _audit(desk, "dual.approve")] == ["supervisor"]


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"signer": "7505055123080"},
         "signer: rule 15: prizes are not transferable: the prize is Thandi"),
        ({"signature": ""}, "signature: String should have at least 1 character"),
        ({"signer": ""}, "signer: the winner&#39;s ID or card number"),
        ({"signer": "a\tb"}, "signer: the winner&#39;s ID or card number"),
        ({"place": "2"}, "place: rule 15: place 2 of the qualifying has no advertised prize"),
        ({"place": "x"}, "place: pick the prize to pay"),
        ({"stage": "final"}, "place: rule 15: place 1 of the final has no advertised prize"),
        ({"machine": "A02"}, "rule P1: prizes to the machine are not allowed at this venue"),
        ({"machine": "no such!"}, "machine: not in the expected form"),
    ],
)  # fmt: skip
async def test_a_refused_payout_is_not_even_asked(
    desk: Desk, fields: dict[str, str], line: str
) -> None:
    """T15: the rules refuse at once (tried in a rolled-back savepoint), in one line
    naming the field; no pending action, nothing paid or audited."""
    await scene.qualifying_over(desk)
    before = await _writes(desk)
    async with signed_in(desk, "director") as client:
        r = await _form(client, desk, "/console/prizes/pay",
                        {"place": "1", "signer": THANDI, "signature": "s", **fields})  # fmt: skip
    assert r.status_code == 422, r.text
    assert line in r.text, _flash(r.text)
    assert await _pending(desk) == []
    assert await _paid(desk) == []
    assert await _writes(desk) == before


async def test_a_place_is_not_paid_before_its_stage_is_over(desk: Desk) -> None:
    """T15: a place is settled only when its stage is over."""
    async with signed_in(desk, "director") as client:
        await _form(client, desk, "/console/prizes/schedule", {"minimums": "1=100000"})
        page = await client.get(PAGE)
        r = await _form(client, desk, "/console/prizes/pay",
                        {"place": "1", "signer": THANDI, "signature": "s"})  # fmt: skip
    assert "Nothing to pay" in page.text
    assert r.status_code == 422
    assert "place: rule 15: the qualifying is not over: place 1 is not settled" in r.text


async def test_p2_p4_a_payout_to_the_machine_is_journaled_once_witnessed(desk: Desk) -> None:
    """P2: the same form with a machine, where the venue allows it (P1): it waits for its
    witness like any payout; approved, the transfer is journaled for the running gateway
    to send (P4), and the place stays unpaid until the machine says it took the credits."""
    from gateway.tournament.services import machine_prizes as mp
    from gateway.tournament.services.common import unit_of_work
    from storage.machine_prizes import MachinePrizeTransfer

    await scene.qualifying_over(desk)
    async with unit_of_work(desk.sessions) as s:
        await mp.set_setting(s, allowed=True, reason="board letter", actor="director", now=NOW)
    async with signed_in(desk, "cashier") as cashier:
        r = await _form(cashier, desk, "/console/prizes/pay",
                        {"place": "1", "signer": THANDI, "signature": "slip 7",
                         "machine": "A02"})  # fmt: skip
        assert r.status_code == 303, r.text
        waiting = await cashier.get(r.headers["location"])
        assert "to machine A02 (AFT, rule P2) waits for its witness" in waiting.text
    (pending,) = await _pending(desk)
    async with signed_in(desk, "supervisor") as supervisor:
        approvals = await supervisor.get("/console/pending")
        r = await supervisor.post(f"/console/pending/{pending.id}/approve",
                                  data={"csrf": csrf_of(approvals.text)})  # fmt: skip
        assert r.status_code == 303, r.text
    async with desk.sessions() as s:
        (row,) = (await s.scalars(select(MachinePrizeTransfer))).all()
    assert (row.status, row.machine_id, row.amount_cents) == ("journaled", "A02", 100000)
    assert (row.requested_by, row.witness) == ("cashier", "supervisor")
    assert await _paid(desk) == []  # paid only when the machine took it (P5)
