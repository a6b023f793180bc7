"""Hot-seat draws and wild cards through the services, on each backend (house clauses
HS1–HS7, docs/rules.md): the commitment before the heat, the draws at the close from the
recorded seats, the seed revealed and recomputable, the prize paid to the winner who signs;
refusals name the clause and change nothing; every change is audited, the seed only once
revealed."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any
from zoneinfo import ZoneInfo

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.app.live_draws import LiveDraws
from gateway.records.document import ExportContext, build_document
from gateway.records.exporter import write_export
from gateway.records.heat_export import heat_body
from gateway.records.keys import public_pem
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.hotseat import commitment, draw_moments
from gateway.tournament.services import hotseat as hs
from gateway.tournament.services.finals import seat_stage
from gateway.tournament.settings import TournamentSettings
from storage.audit import AuditEntry
from storage.enums import SeatStatus
from storage.hotseat import HotseatCommitment, HotseatDraw
from storage.testing import unique_id_number
from storage.tournament import Seat

from .conftest import Desk, at, score
from .test_services_rules import refused

DAY = date(2026, 11, 2)
ANN, BEN, CAT = "8001015009087", "8101015009086", "8201015009085"
Q = Stage.QUALIFYING
VERIFIER = Path(__file__).resolve().parents[3] / "tools" / "verify_export.py"


def _verifier() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_export", VERIFIER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _heat_of_four(desk: Desk) -> tuple[int, int, str]:
    """One qualifying heat for Ann, Ben, Cat and Dee (seats 1-4); returns (tournament,
    heat, Dee's ID number)."""
    tid = await desk.tournament(TournamentSettings(semi_final_qualifiers=1))
    heat = await desk.heat(at(DAY, 18))
    dee = unique_id_number()
    for id_number, name in ((ANN, "Ann"), (BEN, "Ben"), (CAT, "Cat"), (dee, "Dee")):
        player = await desk.player(id_number, name)
        await desk.sell(player, at(DAY, 12))
        await desk.register(heat, player, at(DAY, 12, 5))
    return tid, heat, dee


async def _rows(desk: Desk, model: type) -> list:  # type: ignore[type-arg]
    async def work(session: AsyncSession) -> list:  # type: ignore[type-arg]
        return list((await session.execute(select(model))).scalars())

    return list(await desk.run(work))


async def test_hs1_to_hs5_heat_draws_committed_taken_at_close_and_revealed(
    desk: Desk, tmp_path: Path
) -> None:
    _tid, heat, _dee = await _heat_of_four(desk)
    now = at(DAY, 17)
    await refused(
        desk, r"^HS2: draws must be 1 to 20, not 0", hs.commit_heat, heat, draws=0,
        prize_cents=50000, actor="director", now=now,
    )  # fmt: skip
    await refused(
        desk, r"^HS2: prize_cents must not be negative", hs.commit_heat, heat, draws=2,
        prize_cents=-1, actor="director", now=now,
    )  # fmt: skip
    await refused(
        desk, r"^HS4: heat:\d+ has no commitment: no draw without one",
        hs.take_heat_draws, heat, actor="director", now=now,
    )  # fmt: skip
    row = await desk.run(
        hs.commit_heat, heat, draws=2, prize_cents=50000, actor="director", now=now
    )
    await refused(
        desk, r"^HS4: heat:\d+ is already committed", hs.commit_heat, heat, draws=1,
        prize_cents=0, actor="director", now=now,
    )  # fmt: skip
    before = await desk.run(hs.announcement, f"heat:{heat}")
    assert before.commitment == row.commitment
    assert before.seed is None  # HS5: the boards show the hash only
    assert before.winners == ()
    commits = [a for a in await _rows(desk, AuditEntry) if a.action == "hotseat.commit"]
    assert len(commits) == 1
    assert row.seed_hex is None  # HS5: the database holds a nonce; the seed needs the key
    assert row.nonce_hex not in str(commits[0].details)
    await refused(
        desk, r"^HS5: heat \d+ is scheduled: draws are revealed at close",
        hs.take_heat_draws, heat, actor="director", now=now,
    )  # fmt: skip

    await desk.play(heat, {1: 1500, 2: 1200, 3: 900}, at(DAY, 18), absent=(4,))  # Dee forfeits
    after = at(DAY, 19)
    draws = await desk.run(hs.take_heat_draws, heat, actor="director", now=after)
    assert [d.draw_index for d in draws] == [0, 1]
    for d in draws:
        assert json.loads(d.candidates) == ["001", "002", "003", "004"]
        assert json.loads(d.ineligible) == ["004"]  # HS1: absent, forfeited
        assert d.winner in {"001", "002", "003"}
        assert d.prize_cents == 50000
    stored = (await _rows(desk, HotseatCommitment))[0]
    assert stored.seed_hex is not None  # revealed at the close
    seed = bytes.fromhex(stored.seed_hex)
    assert commitment(seed, f"heat:{heat}") == row.commitment  # HS4
    started = at(DAY, 18)
    assert [d.moment for d in draws] == draw_moments(
        seed, f"heat:{heat}", started, started + timedelta(seconds=600), 2
    )  # HS2: from the seed, inside the heat's running time
    shown = await desk.run(hs.announcement, f"heat:{heat}")
    assert shown.seed == stored.seed_hex  # HS5: revealed after the close
    assert [w[1] for w in shown.winners] == [d.winner for d in draws]
    await refused(
        desk, r"^HS5: heat:\d+ is already drawn and revealed",
        hs.take_heat_draws, heat, actor="director", now=after,
    )  # fmt: skip

    # The heat's signed export carries the draws; the stand-alone verifier recomputes them.
    ctx = ExportContext("Ridge Casino", ZoneInfo("Africa/Johannesburg"), after)
    document = build_document(
        "heat", str(heat), await desk.run(heat_body, heat), ctx, training=False
    )
    assert document["body"]["hotseat"][0]["seed"] == stored.seed_hex
    key = Ed25519PrivateKey.generate()
    files = write_export(document, tmp_path, key)
    (tmp_path / "venue.pem").write_bytes(public_pem(key.public_key()))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(VERIFIER), str(files.json), str(tmp_path / "venue.pem"),
        stdout=asyncio.subprocess.PIPE, cwd=VERIFIER.parent, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, out
    assert out.decode().rstrip().endswith(", 2 hot-seat draws recomputed")


async def test_hs7_prize_paid_to_the_winner_who_signs(desk: Desk) -> None:
    _tid, heat, dee = await _heat_of_four(desk)
    await desk.run(
        hs.commit_heat, heat, draws=1, prize_cents=25000, actor="director", now=at(DAY, 17)
    )
    await desk.play(heat, {1: 1500, 2: 1200, 3: 900}, at(DAY, 18), absent=(4,))
    (draw,) = await desk.run(hs.take_heat_draws, heat, actor="director", now=at(DAY, 19))
    winner = {"001": ANN, "002": BEN, "003": CAT}[draw.winner]
    later = at(DAY, 19, 30)
    await refused(
        desk, r"^rule 15: prizes are not transferable", hs.pay_draw, draw.id, signer=dee,
        signature="slip 9", witness="Floor Lee", actor="cashier", now=later,
    )  # fmt: skip
    await refused(
        desk, r"^rule 15: the witness must be someone other than the winner", hs.pay_draw,
        draw.id, signer=winner, signature="slip 9", witness=winner, actor="cashier", now=later,
    )  # fmt: skip
    paid = await desk.run(
        hs.pay_draw, draw.id, signer=winner, signature="slip 9", witness="Floor Lee",
        actor="cashier", now=later,
    )  # fmt: skip
    assert paid.paid_by == "cashier"
    assert paid.witness == "Floor Lee"
    await refused(
        desk, r"^HS7: draw \d+ was paid at 2026-11-02 17:30 UTC", hs.pay_draw, draw.id,
        signer=winner, signature="slip 10", witness="Floor Lee", actor="cashier", now=later,
    )  # fmt: skip
    audit = [a for a in await _rows(desk, AuditEntry) if a.action == "hotseat.paid"]
    assert [(a.actor, json.loads(a.details)["amount_cents"]) for a in audit] == [("cashier", 25000)]


async def test_hs1_a_disqualified_player_cannot_win(desk: Desk) -> None:
    tid, heat, _dee = await _heat_of_four(desk)
    await desk.run(
        hs.commit_heat, heat, draws=3, prize_cents=100, actor="director", now=at(DAY, 17)
    )
    await desk.play(heat, {1: 1500, 2: 1200, 3: 900, 4: 800}, at(DAY, 18))
    await desk.run(
        svc.disqualify, tid, BEN, rule=23, reason="abusive to staff", actor="director",
        now=at(DAY, 18, 30),
    )  # fmt: skip
    draws = await desk.run(hs.take_heat_draws, heat, actor="director", now=at(DAY, 19))
    for d in draws:
        assert json.loads(d.ineligible) == ["002"]  # Ben's seat: played, then disqualified
        assert d.winner in {"001", "003", "004"}


async def test_hs4_no_commitment_once_the_heat_started(desk: Desk) -> None:
    _tid, heat, _dee = await _heat_of_four(desk)
    await desk.play(heat, {1: 1500}, at(DAY, 18), absent=(2, 3, 4))
    await refused(
        desk, r"^HS4: heat \d+ is closed: commit before it starts", hs.commit_heat, heat,
        draws=1, prize_cents=0, actor="director", now=at(DAY, 19),
    )  # fmt: skip


async def test_hs6_wild_card_from_the_entries_that_did_not_go_through(desk: Desk) -> None:
    tid, heat, _dee = await _heat_of_four(desk)
    await refused(
        desk, r"^HS6: stage: the final has no next stage", hs.commit_wildcard, tid,
        Stage.FINAL, actor="director", now=at(DAY, 17),
    )  # fmt: skip
    row = await desk.run(hs.commit_wildcard, tid, Q, actor="director", now=at(DAY, 17))
    await refused(
        desk, r"^HS6: the qualifying is not over", hs.draw_wildcard, tid, Q,
        actor="director", now=at(DAY, 17),
    )  # fmt: skip
    await desk.play(heat, {1: 1500, 2: 1200, 3: 900, 4: 800}, at(DAY, 18))
    draw = await desk.run(hs.draw_wildcard, tid, Q, actor="director", now=at(DAY, 19))
    entries = {s.seat_number: s.entry_id for s in await desk.run(svc.heat_seats, heat)}
    # Ann (1500) goes straight to the final, Ben (1200) to the semi-final: Cat or Dee.
    assert json.loads(draw.candidates) == sorted([str(entries[3]), str(entries[4])])
    assert draw.entry_id in {entries[3], entries[4]}
    assert await desk.run(hs.wildcard_entries, tid, Q) == [draw.entry_id]
    await desk.heat(at(DAY, 21), stage=Stage.SEMI_FINAL, now=at(DAY, 17))
    seated = await desk.run(seat_stage, tid, Stage.SEMI_FINAL, actor="director", at=at(DAY, 20))
    assert sorted(seated.seats) == sorted([entries[2], draw.entry_id])  # Ben and the wild card
    items = await desk.run(hs.export_items, row.subject)
    ctx = ExportContext("Ridge Casino", ZoneInfo("Africa/Johannesburg"), at(DAY, 20))
    document = build_document("stage", f"{tid}:qualifying", {"hotseat": items}, ctx, training=False)
    assert _verifier().check_hotseat(document["body"]) == (None, 1)
    await refused(
        desk, r"^HS4: the qualifying is over: commit a wild card before it ends",
        hs.commit_wildcard, tid, Q, actor="director",
        now=at(DAY, 20),
    )  # fmt: skip


async def test_hs5_an_insider_with_the_database_can_neither_read_nor_steer_the_seed(
    desk: Desk,
) -> None:
    """The seed is keyed with the venue's audit key, which the database never holds: the
    row keeps a nonce, so reading it tells nothing of the draw; a nonce swapped for one
    whose draw suits the insider no longer matches the commitment, and the draw is
    refused before anything is written (HS4, HS5)."""
    from sqlalchemy import text

    _tid, heat, _dee = await _heat_of_four(desk)
    row = await desk.run(
        hs.commit_heat, heat, draws=1, prize_cents=10000, actor="director", now=at(DAY, 17)
    )
    nonce = bytes.fromhex(row.nonce_hex)
    assert commitment(nonce, f"heat:{heat}") != row.commitment  # the nonce is not the seed

    async def swap(session: AsyncSession) -> None:
        await session.execute(
            text("UPDATE hotseat_commitments SET nonce_hex = :n"), {"n": "00" * 32}
        )

    await desk.run(swap)
    await desk.play(heat, {1: 1500, 2: 1200, 3: 900, 4: 800}, at(DAY, 18))
    await refused(
        desk, r"^HS5: heat:\d+: the seed does not match its commitment",
        hs.take_heat_draws, heat, actor="director", now=at(DAY, 19),
    )  # fmt: skip
    assert await _rows(desk, HotseatDraw) == []


async def test_hs3_draws_taken_live_from_the_seats_at_their_moments(desk: Desk) -> None:
    """HS3: each draw is taken as its moment (from the committed seed) falls, from the
    seats eligible then; the winner is announced, the seed stays secret; a seat that
    stopped playing before the next moment cannot win it; the close takes nothing again
    and reveals the seed, and the stand-alone verifier recomputes both draws."""
    _tid, heat, _dee = await _heat_of_four(desk)
    row = await desk.run(
        hs.commit_heat, heat, draws=2, prize_cents=5000, actor="director", now=at(DAY, 17)
    )
    start = at(DAY, 18)
    await desk.run(svc.begin_heat, heat, present_seats=[1, 2, 3, 4], at=start, actor="director")

    async def moments(session: AsyncSession) -> list[Any]:
        seed = hs.keyed_seed(session, bytes.fromhex(row.nonce_hex), row.subject)
        return draw_moments(seed, row.subject, start, start + timedelta(seconds=600), 2)

    first, second = await desk.run(moments)
    early = first - timedelta(seconds=1)
    assert await desk.run(hs.due_live_draws, early) == []
    await refused(
        desk, r"^HS2: draw 0 of heat \d+ falls later", hs.take_live_draw, heat, 0,
        actor="gateway", now=early,
    )  # fmt: skip
    assert await desk.run(hs.due_live_draws, first) == [(heat, 0)]
    live = await desk.run(hs.take_live_draw, heat, 0, actor="gateway", now=first)
    assert (live.moment, json.loads(live.ineligible)) == (first, [])
    shown = await desk.run(hs.announcement, row.subject)
    assert shown.seed is None  # HS5: the winner is announced, the seed is not
    assert [w[1] for w in shown.winners] == [live.winner]
    await refused(
        desk, r"^HS3: draw 0 of heat \d+ is already taken", hs.take_live_draw, heat, 0,
        actor="gateway", now=second,
    )  # fmt: skip

    async def stop_playing(session: AsyncSession) -> None:  # a malfunction moved it (T20)
        for seat in (await session.execute(select(Seat).where(Seat.heat_id == heat))).scalars():
            if hs.seat_label(seat.seat_number) == live.winner:
                seat.status = SeatStatus.MOVED

    await desk.run(stop_playing)
    assert await desk.run(hs.due_live_draws, second) == [(heat, 1)]
    later = await desk.run(hs.take_live_draw, heat, 1, actor="gateway", now=second)
    assert json.loads(later.ineligible) == [live.winner]
    assert later.winner not in (None, live.winner)
    audit = [a for a in await _rows(desk, AuditEntry) if a.action == "hotseat.draw.live"]
    assert [json.loads(a.details)["winner"] for a in audit] == [live.winner, later.winner]
    assert all("seed" not in json.loads(a.details) for a in audit)

    seats = await desk.run(svc.heat_seats, heat)
    for seat in seats:
        await desk.run(svc.record_machine_score, seat.seat_id, score(1000 + seat.seat_number),
                       at=start + timedelta(minutes=10))  # fmt: skip
    await desk.run(svc.finish_heat, heat, at=start + timedelta(minutes=11), actor="gateway")
    draws = await desk.run(hs.take_heat_draws, heat, actor="director", now=at(DAY, 19))
    assert [d.id for d in draws] == [live.id, later.id]  # nothing drawn again at the close
    (reveal,) = [a for a in await _rows(desk, AuditEntry) if a.action == "hotseat.draw"]
    assert [d["winner"] for d in json.loads(reveal.details)["draws"]] == [
        live.winner, later.winner,
    ]  # fmt: skip
    items = await desk.run(hs.export_items, row.subject)
    ctx = ExportContext("Ridge Casino", ZoneInfo("Africa/Johannesburg"), at(DAY, 19))
    document = build_document("heat", str(heat), {"hotseat": items}, ctx, training=False)
    assert _verifier().check_hotseat(document["body"]) == (None, 2)


async def test_hs3_the_running_gateway_takes_each_draw_once_as_its_moment_falls(
    desk: Desk,
) -> None:
    """HS3: the gateway's loop (``gateway/app/live_draws.py``) takes the draws due at each
    step, each once, under its account; a second gateway on the same database takes none
    again; nothing is due before the first moment or once the heat has closed."""
    _tid, heat, _dee = await _heat_of_four(desk)
    await desk.run(hs.commit_heat, heat, draws=3, prize_cents=0, actor="director",
                   now=at(DAY, 17))  # fmt: skip
    start = at(DAY, 18)
    await desk.run(svc.begin_heat, heat, present_seats=[1, 2, 3, 4], at=start, actor="director")
    clock = [start]
    here = LiveDraws(desk.maker, actor="gateway:serve", clock=lambda: clock[0])
    other = LiveDraws(desk.maker, actor="gateway:standby", clock=lambda: clock[0])
    assert await here.step() == 0  # no moment yet at the start
    clock[0] = start + timedelta(seconds=599)  # every moment has come
    assert await here.step() == 3
    assert await other.step() == 0  # taken already: nothing twice
    draws = await _rows(desk, HotseatDraw)
    assert sorted(d.draw_index for d in draws) == [0, 1, 2]
    assert {d.taken_by for d in draws} == {"gateway:serve"}
    assert all(d.moment is not None and d.moment <= clock[0] for d in draws)
