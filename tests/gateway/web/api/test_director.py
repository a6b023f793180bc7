"""The director's desk over the API: each endpoint does what its ``reelgate`` command
does (the same service), answers 403 naming the permission to a role without it, and
refuses what the rules refuse with 422 in the rule's words (and the rule's number).
The T15 payout is dual control: its witness is the approving account, never the
requester."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import select

from gateway.accounts.roles import PERMISSIONS, Permission, Role
from storage.audit import AuditEntry
from storage.prizes import PrizePayout
from tests.gateway.web.api import director_scenes as scene
from tests.gateway.web.api.conftest import Desk
from tests.gateway.web.api.director_samples import SAMPLES, SEED, THANDI
from tests.gateway.web.api.test_permissions import GUARDED

V1 = "/api/v1"
DIRECTOR = [(m, p, perm) for m, p, perm in GUARDED if (m, p) in SAMPLES]


async def _call(desk: Desk, method: str, url: str, body: Any, who: str = "director") -> Any:
    return await desk.client.request(method.upper(), url, json=body, headers=desk.auth(who))


async def _refused(
    desk: Desk, method: str, url: str, body: Any, rule: int | None, words: str
) -> None:
    r = await _call(desk, method, url, body)
    assert r.status_code == 422, r.text
    assert r.json()["rule"] == rule
    assert words in r.json()["error"], r.json()["error"]


def test_the_director_endpoints_are_guarded() -> None:
    assert len(DIRECTOR) == len(SAMPLES)


async def test_403_names_the_permission(desk: Desk) -> None:
    for made in ("due_heat", "due_seat", "added_heat", "semi_seat_2", "entry_thandi"):
        desk.ids[made] = 999_999  # refused before any service looks
    for method, path, permission in DIRECTOR:
        outside = [r for r in Role if r not in PERMISSIONS[Permission(permission)]]
        if not outside:
            continue  # a read every role may make
        url, body = SAMPLES[(method, path)](desk)
        r = await _call(desk, method, url, body, outside[0].value)
        assert r.status_code == 403, (path, r.text)
        assert r.json()["error"] == f"permission: role {outside[0].value} may not {permission}"


async def test_show_reschedule_and_cancel_t10(desk: Desk) -> None:
    heat = f"{V1}/heats/{desk.ids['heat']}"
    r = await _call(desk, "get", f"{V1}/heats/{desk.ids['done_heat']}", None)
    assert r.status_code == 200, r.text
    assert r.json()["heat"]["status"] == "closed"
    assert [s["holder_name"] for s in r.json()["seats"]] == ["Thandi Mokoena"]
    await _refused(desk, "get", f"{V1}/heats/999999", None, None, "heat 999999 does not exist")
    await _refused(
        desk, "post", f"{heat}/reschedule",
        {"starts_at": "2026-11-20T10:30:00+02:00", "announced_via": "MC", "reason": "r"},
        10, "must be announced at least 60 min ahead",
    )  # fmt: skip
    r = await _call(
        desk, "post", f"{heat}/reschedule",
        {"starts_at": "2026-11-21T12:00:00+02:00", "announced_via": "MC", "reason": "move"},
    )  # fmt: skip
    assert r.status_code == 200, r.text
    assert datetime.fromisoformat(r.json()["starts_at"]) == datetime(2026, 11, 21, 10, tzinfo=UTC)
    await _refused(
        desk, "post", f"{V1}/heats/{desk.ids['done_heat']}/cancel",
        {"announced_via": "MC", "reason": "r"}, 10, "closed",
    )  # fmt: skip
    r = await _call(desk, "post", f"{heat}/cancel", {"announced_via": "MC", "reason": "closed"})
    assert r.json() == {"heat": desk.ids["heat"], "status": "cancelled", "entries_released": []}


async def test_roll_call_begin_and_finish_t22(desk: Desk) -> None:
    await scene.due_heat(desk)
    heat = f"{V1}/heats/{desk.ids['due_heat']}"
    await _refused(desk, "post", f"{heat}/roll-call", {"seats": [3], "present": True}, 22, "nobody")
    r = await _call(desk, "post", f"{heat}/roll-call", {"seats": [1], "present": False})
    assert r.status_code == 200, r.text
    assert (r.json()["roll_call_taken"], r.json()["forfeit_at_start"]) == (True, [1])
    called = (await _call(desk, "get", f"{heat}/roll-call", None, "supervisor")).json()
    assert [(x["seat_number"], x["mark"], x["marked_by"]) for x in called["seats"]] == [
        (1, False, "director")
    ]
    assert called["forfeit_at_start"] == [1]
    await _refused(desk, "post", f"{heat}/finish", None, 20, "not under way")
    tomorrow = f"{V1}/heats/{desk.ids['heat']}"
    await _refused(desk, "post", f"{tomorrow}/begin", {}, 22, "is advertised for")
    r = await _call(desk, "post", f"{heat}/begin", {})  # the roll call decides
    assert r.json() == {"heat": desk.ids["due_heat"], "present": [], "forfeited": [1]}
    r = await _call(desk, "post", f"{heat}/finish", None)
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "closed"


async def test_reinstate_a_forfeited_seat_t23(desk: Desk) -> None:
    await scene.due_heat(desk, begun=False)
    seat = f"{V1}/seats/{desk.ids['due_seat']}"
    reason = {"reason": "rule 23: he was there"}
    await _refused(
        desk, "post", f"{V1}/seats/{desk.ids['scored_seat']}/reinstate", reason, 23,
        "not forfeited",
    )  # fmt: skip
    r = await _call(desk, "post", f"{seat}/reinstate", reason)
    assert r.json() == {"seat": desk.ids["due_seat"], "status": "present"}
    await _refused(
        desk, "post", f"{V1}/heats/{desk.ids['due_heat']}/finish", None, 12, "no score yet"
    )


async def test_malfunction_restart_and_postpone_t20(desk: Desk) -> None:
    await scene.due_heat(desk, begun=True)
    heat = f"{V1}/heats/{desk.ids['due_heat']}"
    await _refused(
        desk, "post", f"{heat}/restart",
        {"failed_at": "2026-11-20T09:00:00+02:00", "reason": "down"}, 20, "must be postponed",
    )  # fmt: skip
    await _refused(
        desk, "post", f"{V1}/heats/{desk.ids['heat']}/restart",
        {"failed_at": "2026-11-20T09:55:00+02:00", "reason": "down"}, 20, "nothing to restart",
    )  # fmt: skip
    r = await _call(
        desk, "post", f"{heat}/restart",
        {"failed_at": "2026-11-20T09:55:00+02:00", "reason": "the gateway lost the bank"},
    )  # fmt: skip
    assert (r.json()["status"], r.json()["restarts"]) == ("restarted", 1)
    await _refused(
        desk, "post", f"{V1}/heats/{desk.ids['done_heat']}/postpone", {"reason": "r"}, 20,
        "cannot be postponed",
    )  # fmt: skip
    r = await _call(desk, "post", f"{heat}/postpone", {"reason": "not fixed in time"})
    assert r.json()["status"] == "postponed"


async def test_a_malfunction_reseats_the_player_t20(desk: Desk) -> None:
    await scene.due_heat(desk, begun=True)
    await _refused(
        desk, "post", f"{V1}/seats/{desk.ids['scored_seat']}/malfunction", {"reason": "froze"},
        20, "closed",
    )  # fmt: skip
    r = await _call(desk, "post", f"{V1}/seats/{desk.ids['due_seat']}/malfunction", {"reason": "x"})
    assert r.status_code == 200, r.text
    assert (r.json()["outcome"], r.json()["new_heat_id"]) == ("reseated", desk.ids["heat"])


async def test_proxy_and_added_heat_draw_t16_t21(desk: Desk) -> None:
    await scene.waiting_for_an_added_heat(desk)
    nominee = {"name": "Ben", "id_number": "8101015009086", "date_of_birth": "1981-01-01"}
    await _refused(
        desk, "post", f"{V1}/seats/{desk.ids['scored_seat']}/proxy", nominee, 12,
        "no substitutes in qualifying heats",
    )  # fmt: skip
    await _refused(
        desk, "post", f"{V1}/seats/{desk.ids['semi_seat_1']}/proxy", nominee, 16,
        "own best-placed seat",
    )  # fmt: skip
    await _refused(
        desk, "post", f"{V1}/heats/{desk.ids['heat']}/added-heat-draw", {}, 20,
        "qualifying malfunctions",
    )  # fmt: skip
    r = await _call(
        desk, "post", f"{V1}/heats/{desk.ids['added_heat']}/added-heat-draw", {"seed": SEED}
    )
    assert r.status_code == 200, r.text
    assert (r.json()["seed"], list(r.json()["seats"].values())) == (SEED, [1])


async def test_decisions_draws_and_verify_t19_t23(desk: Desk) -> None:
    spring = f"{V1}/tournaments/Spring"
    r = await _call(desk, "get", spring, None, "dealer")
    assert r.json()["name"] == "Spring"
    await _refused(
        desk, "post", f"{spring}/decisions", {"about": " ", "decision": "warned", "reason": "r"},
        23, "say what the decision is about",
    )  # fmt: skip
    r = await _call(
        desk, "post", f"{spring}/decisions", {"about": "p2", "decision": "warned", "reason": "r"}
    )
    assert r.status_code == 201, r.text
    digital = {"stage": "qualifying", "credits": 1500, "seed": SEED}
    await _refused(desk, "post", f"{spring}/draws/digital", digital, 19, "no unresolved tie")
    await scene.tied_at_the_top(desk)
    tied = (await _call(desk, "get", f"{spring}/ties?stage=qualifying", None, "cashier")).json()
    assert [(t["place"], t["credits"], t["next_round"], len(t["entry_ids"])) for t in tied] == [
        (1, 1500, 1, 2)
    ]
    entries = [desk.ids["spare_entry"], desk.ids["spare_entry"]]
    cards = {"stage": "qualifying", "credits": 1500, "cards": [{"entry": e, "card": "QH"}
                                                                for e in entries]}  # fmt: skip
    r = await _call(desk, "post", f"{spring}/draws/cards", cards)
    assert r.status_code == 422
    assert r.json()["error"].startswith("cards: Value error, one card per entry")
    r = await _call(desk, "post", f"{spring}/draws/digital", digital)
    assert r.status_code == 200, r.text
    assert r.json()["seed"] == SEED
    assert r.json()["still_tied"] == []
    assert (await _call(desk, "get", f"{spring}/ties?stage=qualifying", None)).json() == []
    verified = await _call(desk, "get", f"{spring}/verify-draws", None, "auditor")
    assert verified.json() == {"ok": True, "problems": []}


async def test_seat_draw_and_expire(desk: Desk) -> None:
    spring = f"{V1}/tournaments/Spring"
    await _refused(desk, "post", f"{spring}/seat-draw", {"stage": "semi-final"}, 13, "not all over")
    await scene.qualifying_over_with_a_semi(desk)
    r = await _call(desk, "post", f"{spring}/seat-draw", {"stage": "semi-final", "seed": SEED})
    assert r.status_code == 200, r.text
    assert list(r.json()["seats"]) == [str(desk.ids["spare_entry"])]
    await _refused(
        desk, "post", f"{spring}/seat-draw", {"stage": "semi-final"}, 14, "already been drawn"
    )
    await _refused(desk, "post", f"{V1}/tournaments/Autumn/expire", None, None, "does not exist")
    await scene.stale_entry(desk)
    r = await _call(desk, "post", f"{spring}/expire", None)
    assert r.json() == {"expired": [desk.ids["stale_entry"]]}


async def test_prize_schedule_and_surplus_t15(desk: Desk) -> None:
    prizes = f"{V1}/tournaments/Spring/prizes"
    minimums = {"minimums": [{"place": 1, "cents": 100000}, {"place": 2, "cents": 50000}]}
    r = await _call(desk, "put", f"{prizes}/qualifying/schedule", minimums)
    assert [(x["place"], x["minimum_cents"]) for x in r.json()["prizes"]] == [
        (1, 100000),
        (2, 50000),
    ]
    lower = {"minimums": [{"place": 1, "cents": 100000}, {"place": 2, "cents": 40000}],
             "reason": "budget"}  # fmt: skip
    await _refused(desk, "put", f"{prizes}/qualifying/schedule", lower, 15, "advertised at")
    four = {"minimums": [{"place": n, "cents": 5 - n} for n in (1, 2, 3, 4)]}
    await _refused(desk, "put", f"{prizes}/final/schedule", four, 19, "only 3 are strictly")
    twice = {"minimums": [{"place": 1, "cents": 1}, {"place": 1, "cents": 2}]}
    r = await _call(desk, "put", f"{prizes}/final/schedule", twice)
    assert (r.status_code, r.json()["error"]) == (422, "minimums: Value error, each place once")
    short = {"surplus_cents": 1001, "shares": [{"place": 1, "cents": 1000}], "reason": "more"}
    await _refused(desk, "put", f"{prizes}/qualifying/surplus", short, 15, "every cent")
    weights = {"surplus_cents": 10001, "weights": [2, 1], "reason": "larger field"}
    r = await _call(desk, "put", f"{prizes}/qualifying/surplus/weights", weights)
    assert [x["surplus_cents"] for x in r.json()["prizes"]] == [6667, 3334]
    listed = await _call(desk, "get", f"{prizes}/qualifying", None, "cashier")
    assert listed.json() == r.json()


async def _paid(desk: Desk) -> list[PrizePayout]:
    async with desk.sessions() as s:
        return list((await s.execute(select(PrizePayout))).scalars())


async def test_prize_pay_is_witnessed_by_the_approving_account_t15(desk: Desk) -> None:
    pay = f"{V1}/tournaments/Spring/prizes/qualifying/places/1/receipt"
    slip = {"signer": THANDI, "signature": "slip 1"}
    await _refused(desk, "post", pay, slip, 15, "has no advertised prize")
    await scene.due_heat(desk)
    schedule = {"minimums": [{"place": 1, "cents": 100000}]}
    r = await _call(desk, "put", f"{V1}/tournaments/Spring/prizes/qualifying/schedule", schedule)
    assert r.status_code == 200, r.text
    await _refused(desk, "post", pay, slip, 15, "the qualifying is not over")
    await _call(desk, "post", f"{V1}/heats/{desk.ids['due_heat']}/cancel",
                {"announced_via": "MC", "reason": "r"})  # fmt: skip
    await scene.qualifying_over(desk)
    not_hers = {"signer": "7505055123080", "signature": "slip 1"}
    await _refused(desk, "post", pay, not_hers, 15, "prizes are not transferable")
    r = await _call(desk, "post", pay, slip, "cashier")
    assert r.status_code == 202, r.text
    assert "witness" not in r.json()["payload"]  # the requester cannot name the witness
    pending = r.json()["pending"]
    approve = f"{V1}/pending/{pending}/approve"
    own = await desk.client.post(approve, headers=desk.auth("cashier"))
    assert (own.status_code, "second person" in own.json()["error"]) == (422, True)
    dealer = await desk.client.post(approve, headers=desk.auth("dealer"))
    assert "must be approved by director, supervisor" in dealer.json()["error"]
    assert await _paid(desk) == []
    r = await desk.client.post(approve, headers=desk.auth("supervisor"))
    assert r.status_code == 200, r.text
    assert (r.json()["result"]["witness"], r.json()["result"]["amount_cents"]) == (
        "supervisor",
        100000,
    )
    (payout,) = await _paid(desk)
    assert (payout.witness, payout.paid_by, payout.signer) == ("supervisor", "cashier", THANDI)
    async with desk.sessions() as s:
        audit = (
            await s.execute(select(AuditEntry).where(AuditEntry.action == "tournament.prizes.paid"))
        ).scalar_one()
    assert audit.actor == "cashier"  # under the requester's name; the approval is its own row
    # Every role reads the prizes: the signer's ID number is shown by its last 4 only.
    r = await _call(desk, "get", f"{V1}/tournaments/Spring/prizes/qualifying", None, "dealer")
    assert r.status_code == 200, r.text
    (first, *_) = r.json()["prizes"]
    assert (first["paid"], first["signer"]) == (True, f"…{THANDI[-4:]}")
    assert THANDI not in r.text


@pytest.mark.parametrize("requester", ["director", "cashier"])
async def test_either_paying_role_may_ask(desk: Desk, requester: str) -> None:
    await scene.qualifying_over(desk)
    pay = f"{V1}/tournaments/Spring/prizes/qualifying/places/1/receipt"
    r = await _call(desk, "post", pay, {"signer": THANDI, "signature": "s"}, requester)
    assert r.status_code == 202, r.text


async def test_t10a_a_heat_overlapping_another_on_its_bank_is_refused(desk: Desk) -> None:
    """T10a (issue 26, item 2): over the API as over the CLI, scheduling or moving a heat
    into another's time on its bank is refused naming that heat; nothing is stored."""
    spring = f"{V1}/tournaments/Spring/heats"
    new = {"starts_at": "2026-11-21T10:05:00+02:00", "bank": "A", "duration_seconds": 600,
           "starting_credits": 1000}  # fmt: skip
    taken = "bank A is taken from 2026-11-21 10:00 to 10:10 by qualifying heat 2 of Spring"
    await _refused(desk, "post", spring, new, 10, taken)
    later = {**new, "starts_at": "2026-11-21T10:10:00+02:00"}  # back to back is fine
    r = await _call(desk, "post", spring, later)
    assert r.status_code == 201, r.text
    await _refused(
        desk, "post", f"{V1}/heats/{desk.ids['heat']}/reschedule",
        {"starts_at": "2026-11-21T10:15:00+02:00", "announced_via": "MC", "reason": "r"},
        10, "bank A is taken from 2026-11-21 10:10 to 10:20 by qualifying heat 3 of Spring",
    )  # fmt: skip
    listed = (await _call(desk, "get", spring, None)).json()  # in the venue's time
    assert [h["starts_at"][:16] for h in listed] == [
        "2026-11-20T08:00", "2026-11-21T10:00", "2026-11-21T10:10"
    ]  # fmt: skip
