"""Exports of a real day on each backend: the stage (standings, the cut, prizes T15),
the tournament (entries sold, refunded, comped), the Super 9 session (tickets, spins
with the void, claims, prizes, jackpot movement) and the cash-up, each signed, verified
offline and refused once altered."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import OperatorError
from gateway.records.canonical import NotCanonical, canonical_bytes
from gateway.records.document import ExportContext
from gateway.records.exporter import build_export, verify_export, write_export
from gateway.tournament.rules.enums import Stage
from storage.teams import Team, TeamMember, TeamPrizePlace, TeamSettings
from storage.tournament import Player

from .conftest import SAST, Venue

NOW = datetime(2026, 12, 2, 21, 0, tzinfo=UTC)


async def _export(venue: Venue, kind: str, ident: str) -> dict[str, Any]:
    async def work(session: AsyncSession) -> dict[str, Any]:
        return await build_export(session, kind, ident, ExportContext("Ridge Casino", SAST, NOW))

    found: dict[str, Any] = await venue.desk.run(work)
    return found


def _signed_round_trip(document: dict[str, Any], tmp_path: Path) -> Path:
    """Write, verify, alter one byte and verify again."""
    key = Ed25519PrivateKey.generate()
    files = write_export(document, tmp_path, key)
    verdict = verify_export(files.json, key.public_key())
    assert verdict.ok, verdict.problem
    assert verdict.document == document
    data = files.json.read_bytes()
    files.json.write_bytes(data.replace(b'"venue":"Ridge Casino"', b'"venue":"Ridge Casinq"'))
    altered = verify_export(files.json, key.public_key())
    assert not altered.ok
    assert altered.problem is not None
    assert altered.problem.startswith("signature does not match the file")
    return files.html


async def test_stage_export_standings_cut_and_prizes(venue: Venue, tmp_path: Path) -> None:
    """T13/T14 cut shown per line, T15 schedule and payout with receipt, official."""
    doc = await _export(venue, "stage", "Ridge:qualifying")
    assert doc["kind"] == "stage"
    assert doc["id"] == f"{venue.tournament_id}:qualifying"
    assert doc["generated_at"] == "2026-12-02T23:00:00+02:00"
    body = doc["body"]
    assert body["result"] == "official"
    assert [(x["place"], x["player"]["name"], x["credits"], x["goes_on_to"])
            for x in body["standings"]] == [
        (1, "Ann", 1500, "final (T13)"),
        (2, "Cat", 900, "semi-final (T14)"),
    ]  # fmt: skip
    prizes = body["prizes"]
    (place,) = prizes["places"]
    assert place["total_cents"] == 100_000
    assert place["paid_cents"] == 100_000
    assert place["signer"] == "8001015009087"
    assert place["witness"] == "Floor Lee"
    assert (prizes["advertised_cents"], prizes["unpaid_cents"]) == (100_000, 0)
    html = _signed_round_trip(doc, tmp_path).read_text("utf-8")
    assert "R1,000.00" in html
    assert "OFFICIAL" in html


async def test_tournament_export_entries_and_every_stage(venue: Venue, tmp_path: Path) -> None:
    """T5 comp, T6 package, T23 refund totals; all three stages present."""
    doc = await _export(venue, "tournament", "Ridge")
    entries = doc["body"]["entries"]
    assert entries["sold_cents"] == 5000 + 20_000
    assert entries["sold_seats"] == 1 + 4
    assert entries["complimentary_seats"] == 1
    assert (entries["refunded_entries"], entries["refunded_cents"]) == (1, 5000)
    assert entries["net_cents"] == 20_000
    assert entries["sold_by_kind"]["package"] == {"purchases": 1, "seats": 4,
                                                  "amount_cents": 20_000}  # fmt: skip
    assert sorted(doc["body"]["stages"]) == ["final", "qualifying", "semi-final"]
    assert doc["body"]["stages"]["final"]["result"] == "provisional"  # no final heats
    assert doc["body"]["prizes"]["paid_cents"] == 100_000
    _signed_round_trip(doc, tmp_path)


async def test_tournament_export_carries_the_teams_h5_h6(venue: Venue, tmp_path: Path) -> None:
    """House format H1-H12: a tournament that runs teams exports its team settings, its
    teams and each stage's team standings, made from the stage's standings (Ann 1500 and
    Cat 900 in qualifying: a team of the two scores 2400 under ``sum``, H6), who goes on
    through the team cut (H10) and the advertised team prizes (H11)."""
    before = await _export(venue, "tournament", "Ridge")
    assert "teams" not in before["body"]  # no teams: the export is as it was

    async def teams(session: AsyncSession) -> None:
        # Registered before play (H9), as the desk would have: rows written directly
        # because the service rightly refuses a team of players who have played.
        players = {p.name: p.id for p in await session.scalars(select(Player))}
        t = venue.tournament_id
        session.add(TeamSettings(tournament_id=t, scoring="sum", min_size=2, max_size=3,
                                 advance=1, set_by="director", set_at=NOW))  # fmt: skip
        session.add(TeamPrizePlace(tournament_id=t, stage=Stage.QUALIFYING, place=1,
                                   cents=50_000, set_by="director", set_at=NOW))  # fmt: skip
        team = Team(tournament_id=venue.tournament_id, name="Aces", registered_by="desk",
                    registered_at=NOW)  # fmt: skip
        session.add(team)
        await session.flush()
        for name in ("Ann", "Cat"):
            session.add(TeamMember(team_id=team.id, player_id=players[name],
                                   tournament_id=venue.tournament_id, captain=name == "Ann",
                                   added_by="desk", added_at=NOW))  # fmt: skip

    await venue.desk.run(teams)
    doc = await _export(venue, "tournament", "Ridge")
    body = doc["body"]["teams"]
    assert body["settings"] == {
        "scoring": "sum", "best_n": None, "min_size": 2, "max_size": 3, "advance": 1,
    }  # fmt: skip
    assert [(t["name"], len(t["members"])) for t in body["teams"]] == [("Aces", 2)]
    [line] = body["standings"]["qualifying"]
    assert (line["place"], line["total"], line["goes_on"], line["out"]) == (1, 2400, True, False)
    [prize] = body["prizes"]["qualifying"]  # H11: advertised, not yet paid (H12)
    assert (prize["place"], prize["cents"], prize["team"], prize["paid_cents"]) == (
        1, 50_000, "Aces", None,
    )  # fmt: skip
    assert sorted(m["score"] for m in line["members"]) == [900, 1500]
    assert body["standings"]["final"][0]["place"] is None  # nobody has played a final
    html = _signed_round_trip(doc, tmp_path).read_text("utf-8")
    assert "Aces" in html


async def test_super9_session_export(venue: Venue, tmp_path: Path) -> None:
    """S9-18 the void kept, S9-14 the claim, S9-16/S9-26 prizes with receipts, S9-15
    the jackpot rows the session wrote."""
    doc = await _export(venue, "super9-session", str(venue.session_id))
    body = doc["body"]
    assert body["session"]["result"] == "official"
    assert [t["serial"] for t in body["tickets"]] == ["A", "B"]
    assert body["buy_ins_cents"] == 10_000
    voided = [s for s in body["spins"] if s["voided"]]
    assert [(s["game_no"], s["void_reason"], s["voided_by"]) for s in voided] == [
        (104, "ball left the wheel", "supervisor")
    ]
    assert [(c["ticket"], c["valid"]) for c in body["claims"]] == [("B", True)]
    assert sorted((p["kind"], p["amount_cents"], p["paid"]) for p in body["prizes"]) == [
        ("consolation", 2_500, True),
        ("jackpot", 500_000, False),
    ]
    moves = body["jackpot"]["movements"]
    assert [(m["kind"], m["amount_cents"]) for m in moves] == [
        ("payout", -500_000),
        ("seed", 500_000),
    ]
    assert body["jackpot"]["balance_before_cents"] == 500_000
    assert body["jackpot"]["balance_after_cents"] == 500_000
    _signed_round_trip(doc, tmp_path)


async def test_cashup_export_and_heat_export(venue: Venue, tmp_path: Path) -> None:
    cash = await _export(venue, "cashup", "2026-12-02")
    assert cash["id"] == "2026-12-02"
    assert cash["body"]["reconciliation"]["ok"] is True
    assert cash["training"] is False
    heat = await _export(venue, "heat", str(venue.heat_id))
    assert [s["score"]["meters"]["games_played"] for s in heat["body"]["seats"]] == [50, 50]
    _signed_round_trip(cash, tmp_path / "cash")
    _signed_round_trip(heat, tmp_path / "heat")


async def test_bad_ids_are_one_line(venue: Venue) -> None:
    with pytest.raises(OperatorError, match=r"^stage ID: 'Ridge' is not TOURNAMENT:"):
        await _export(venue, "stage", "Ridge")
    with pytest.raises(OperatorError, match=r"^heat ID: 'x' is not a number$"):
        await _export(venue, "heat", "x")
    with pytest.raises(OperatorError, match=r"^super9 session 99 does not exist$"):
        await _export(venue, "super9-session", "99")


def test_canonical_form_refuses_floats_naive_times_and_unsafe_integers() -> None:
    assert (
        canonical_bytes({"b": 1, "a": ["é", None, True]}) == '{"a":["é",null,true],"b":1}'.encode()
    )
    with pytest.raises(NotCanonical, match=r"^\$\.body\.amount: float is not allowed"):
        canonical_bytes({"body": {"amount": 50.0}})
    with pytest.raises(NotCanonical, match=r"beyond"):
        canonical_bytes({"n": 2**53})
    doc = json.loads(canonical_bytes({"t": "2026-12-02T19:00:00+02:00"}))
    assert doc == {"t": "2026-12-02T19:00:00+02:00"}
