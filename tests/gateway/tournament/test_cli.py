"""The director's and cashier's commands, end to end on a SQLite file: exit codes, one-line
errors that name the rule, ``--json`` on reads, and refused commands change nothing."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gateway.app.cli import main
from storage.db import make_sessionmaker
from storage.floor import FloorBank, FloorMachine
from storage.migrate import upgrade_async
from tests.keyed_engine import make_engine as keyed_engine

from ..training_db import PASSWORD, add_accounts, cheap_hashes, make_training, type_passwords


def _seed_floor(url: str) -> None:
    async def go() -> None:
        await upgrade_async(url)
        engine = keyed_engine(url)
        async with make_sessionmaker(engine)() as session, session.begin():
            session.add(FloorBank(name="A", enabled=True))
            await session.flush()
            for i in range(1, 4):
                session.add(
                    FloorMachine(
                        machine_id=f"A-{i}",
                        bank_name="A",
                        position=i,
                        endpoint=f"tcp://127.0.0.1:{7000 + i}",
                        updated_at=datetime(2026, 1, 1, tzinfo=UTC),
                    )
                )
        await engine.dispose()

    asyncio.run(go())
    make_training(url)  # the script keys whole days on --now: a training database


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``--database URL`` of a fresh SQLite file with bank A on the floor."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    _seed_floor(url)
    # Dual control at the CLI: the second person is an account that types its password.
    cheap_hashes(monkeypatch)
    add_accounts(
        url, ("dana", "director"), ("sam", "supervisor"), ("dirk", "director"),
        ("cleo", "cashier"),
    )  # fmt: skip
    type_passwords(monkeypatch, *[PASSWORD] * 40)
    return ["--database", url]


def test_director_and_cashier_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], db: list[str]
) -> None:

    def ok(*argv: str) -> Any:
        capsys.readouterr()
        assert main([*argv[:2], *db, *argv[2:], "--json"]) == 0, capsys.readouterr().err
        return json.loads(capsys.readouterr().out)

    def fails(*argv: str) -> str:
        capsys.readouterr()
        assert main([*argv[:2], *db, *argv[2:]]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0  # one line
        return err

    created = ok(
        "tournament",
        "create",
        "Ridge",
        "--semi",
        "2",
        "--final-quota",
        "1",
        "--package",
        "single:5000:1",
        "--package",
        "R200:20000:4:5000",
    )
    assert created["settings"]["packages"][1] == {
        "code": "R200",
        "price_cents": 20000,
        "seats": 4,
        "casino_credit_cents": 5000,
    }
    ok("players", "add", "--id-number", "8001015009087", "--name", "Ann", "--dob", "1980-01-01")
    ok("players", "add", "--id-number", "8101015009086", "--name", "Ben", "--dob", "1981-01-01")
    assert "rule 1: participant is 17" in fails(
        "players",
        "add",
        "--id-number",
        "0901015009087",
        "--name",
        "Kid",
        "--dob",
        "2009-06-01",
        "--now",
        "2026-11-02 09:00",
    )
    heat = ok(
        "heat",
        "schedule",
        "-t",
        "Ridge",
        "--start",
        "2026-11-02 18:00",
        "--bank",
        "A",
        "--now",
        "2026-11-01 09:00",
    )
    assert (heat["seats"], heat["starts_at"]) == (3, "2026-11-02T18:00:00+02:00")
    sale = ok(
        "entries",
        "sell",
        "8001015009087",
        "-t",
        "Ridge",
        "--package",
        "R200",
        "--now",
        "2026-11-02 12:00",
    )
    assert (sale["seats"], sale["amount"], sale["kind"]) == (4, "R200.00", "package")
    ok("entries", "sell", "8101015009086", "-t", "1", "--now", "2026-11-02 12:00")
    seat = ok("heat", "register", "1", "8001015009087", "--now", "2026-11-02 17:00")
    assert (seat["seat"], seat["machine"]) == (1, "A-1")
    err = fails("heat", "register", "1", "8001015009087", "--now", "2026-11-02 17:01")
    assert err == (
        "reelgate: error: rule 16: player already holds a seat in qualifying heat 1 "
        "(one seat per heat)"
    )
    assert "rule 11" in fails("heat", "register", "1", "8101015009086", "--now", "2026-11-02 18:00")
    ok("heat", "register", "1", "8101015009086", "--now", "2026-11-02 17:30")
    begun = ok("heat", "begin", "1", "--present", "1,2", "--now", "2026-11-02 18:00")
    assert begun["forfeited"] == []
    shown = ok("heat", "show", "1")
    seat_ids = [s["seat_id"] for s in shown["seats"]]
    ok(
        "heat",
        "score",
        str(seat_ids[0]),
        "--credits",
        "1500",
        "--reason",
        "link lost",
        "--as",
        "sam",
        "--second",
        "dana",
        "--now",
        "2026-11-02 18:11",
    )
    ok(
        "heat",
        "score",
        str(seat_ids[1]),
        "--credits",
        "1500",
        "--reason",
        "link lost",
        "--as",
        "sam",
        "--second",
        "dana",
        "--now",
        "2026-11-02 18:11",
    )
    ok("heat", "finish", "1", "--now", "2026-11-02 18:12")
    standings = ok("tournament", "standings", "Ridge")
    assert [(x["place"], x["player_name"], x["tied"]) for x in standings["lines"]] == [
        (1, "Ann", True),
        (1, "Ben", True),
    ]
    # T23, issue 24: scores keyed in by a director are marked wherever a score is shown.
    assert [x["manual"] for x in standings["lines"]] == [True, True]
    assert [s["source"] for s in ok("heat", "show", "1")["seats"]] == ["manual", "manual"]
    capsys.readouterr()
    assert main(["tournament", "standings", *db, "Ridge"]) == 0
    assert capsys.readouterr().out.count("manual (T23)") == 2
    assert main(["heat", "show", *db, "1"]) == 0
    assert capsys.readouterr().out.count("manual (T23)") == 2
    assert [t["entry_ids"] for t in standings["ties_to_draw"]] == [[1, 5]]
    assert "rule 19: two entries cannot draw the same card" in fails(
        "tournament",
        "draw",
        "Ridge",
        "--stage",
        "qualifying",
        "--credits",
        "1500",
        "--card",
        "1=QH",
        "--card",
        "5=QH",
    )
    drawn = ok(
        "tournament",
        "draw",
        "Ridge",
        "--stage",
        "qualifying",
        "--credits",
        "1500",
        "--card",
        "1=3C",
        "--card",
        "5=KD:public:Lerato",
    )
    assert drawn == {"rounds": [{"round": 1, "cards": {"1": "3C", "5": "KD"}}], "still_tied": []}
    q = ok("tournament", "qualifiers", "Ridge")
    assert (q["direct_finalists"], q["semi_finalists"]) == ([5], [1])
    assert ok("tournament", "verify-draws", "Ridge") == {"ok": True, "problems": []}
    expired = ok("tournament", "expire", "Ridge", "--now", "2026-11-03 00:00")
    assert expired == {"expired": [2, 3, 4]}
    assert "rule 20" in fails(
        "entries",
        "refund",
        "2",
        "--rule",
        "20",
        "--reason",
        "x",
        "--as",
        "cleo",
        "--second",
        "sam",
    )
    listed = ok("entries", "list", "-t", "Ridge", "8001015009087")
    assert [e["status"] for e in listed] == ["played", "expired", "expired", "expired"]
    assert "settings: unknown key 'colour'" in fails(
        "tournament",
        "set",
        "Ridge",
        "colour=red",
        "--reason",
        "x",
        "--as",
        "dirk",
        "--second",
        "dana",
    )
    changed = ok(
        "tournament",
        "set",
        "Ridge",
        "prize_places=4",
        "--reason",
        "sponsor",
        "--as",
        "dirk",
        "--second",
        "dana",
    )
    assert changed["settings"]["prize_places"] == 4  # T19
    assert ok("tournament", "show", "Ridge")["settings"]["prize_places"] == 4
    assert "does not exist" in fails("heat", "show", "99")
    # exclusion CSV: one bad line refuses the whole file
    bad = tmp_path / "bad.csv"
    bad.write_text("kind,id_number,valid_from\nstaff,8101015009086,2026-11-01\nstaff,,2026-11-01\n")
    assert fails("players", "import-exclusions", str(bad)) == (
        "reelgate: error: rule 2: exclusion CSV line 3: id_number is empty"
    )
    good = tmp_path / "good.csv"
    good.write_text("kind,id_number,valid_from\nstaff,8101015009086,2026-11-01\n")
    imported = ok("players", "import-exclusions", str(good), "--now", "2026-11-04 09:00")
    assert imported == {"added": 1, "disqualified": [{"tournament": 1, "player": 2}]}
    q = ok("tournament", "qualifiers", "Ridge")
    assert (q["direct_finalists"], q["semi_finalists"]) == ([1], [])  # T3: Ben is out
    player = ok("players", "show", "8101015009086", "-t", "Ridge")
    assert player["disqualifications"][0]["rule"] == "3"


def test_bad_input_is_one_line_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], db: list[str]
) -> None:

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err.strip()

    def fails(*argv: str) -> str:
        code, _, err = run(*argv)
        assert code == 2, err
        assert err.count("\n") == 0, err
        return err

    # A database that cannot be opened: one line naming --database, never a traceback.
    assert "--database nonsense://" in fails("tournament", "list", "--database", "nonsense://")
    assert "--database nonsense://" in fails("audit", "verify", "--database", "nonsense://")
    missing = f"sqlite+aiosqlite:///{tmp_path / 'no' / 'such' / 'dir.db'}"
    assert "does not exist" in fails("heat", "list", "-t", "1", "--database", missing)

    assert run("tournament", "create", "Ridge", *db)[0] == 0
    assert fails(
        "players",
        "add",
        *db,
        "--id-number",
        "8001015009087",
        "--name",
        "x" * 201,
        "--dob",
        "1980-01-01",
    ) == ("reelgate: error: players.name: 201 characters, at most 200; nothing saved")
    set_ = ("tournament", "set", "Ridge", *db, "--reason", "x", "--as", "dirk", "--second", "dana")
    assert fails(*set_, "validity=72h") == (
        "reelgate: error: rule 5: settings: validity must be one of same-day, 48h, got '72h'"
    )
    assert fails(*set_, 'packages=[{"code": "R100", "price_cents": 10000}]') == (
        "reelgate: error: rule 6: settings: packages[0] needs 'seats'"
    )
    assert "--limit" in fails("tournament", "standings", "Ridge", *db, "--limit", "-1")
    # Nothing of the refused commands is stored or audited.
    code, out, _ = run("audit", "show", *db, "--json")
    assert code == 0
    actions = [row["action"] for row in json.loads(out) if row["action"] != "records.seal"]
    # the genesis of the keyed chain, the accounts of `db`, then the command (each with
    # the seal of the rows it wrote)
    assert actions == ["audit.chain_keyed", *["user.add"] * 4, "tournament.create"]
    code, out, _ = run("players", "list", *db, "--json")
    assert json.loads(out) == []


def test_tables_show_venue_time_and_settings_by_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], db: list[str]
) -> None:
    assert main(["tournament", "create", "Ridge", *db, "--package", "R300:30000:6:2500"]) == 0
    shown = capsys.readouterr().out
    for text in ("prize_places", "postpone_after_s", "30 min (1800 s)", "R300", "R25.00"):
        assert text in shown
    schedule = ["heat", "schedule", *db, "-t", "Ridge", "--bank", "A"]
    assert main([*schedule, "--start", "2026-11-21 18:00", "--now", "2026-11-20 10:00"]) == 0
    capsys.readouterr()
    assert main(["heat", "list", *db, "-t", "Ridge"]) == 0
    assert "2026-11-21 18:00" in capsys.readouterr().out  # venue-local, to the minute


def test_create_sells_a_single_seat_at_the_seat_price(
    capsys: pytest.CaptureFixture[str], db: list[str]
) -> None:
    capsys.readouterr()
    assert main(["tournament", "create", "Dear", *db, "--seat-price-cents", "6000", "--json"]) == 0
    packages = json.loads(capsys.readouterr().out)["settings"]["packages"]
    assert [(p["code"], p["price_cents"], p["seats"]) for p in packages] == [
        ("single", 6000, 1),  # T5
        ("R200", 20000, 4),  # T6's example
    ]
    set_price = [
        "tournament", "set", "Dear", *db, "seat_price_cents=7000", "--reason", "x",
        "--as", "dirk", "--second", "dana",
    ]  # fmt: skip
    assert main(set_price) == 2
    assert "rule 5: package 'single' is one seat" in capsys.readouterr().err


def test_qualifiers_name_each_stage_as_its_heats_stand(
    capsys: pytest.CaptureFixture[str], db: list[str]
) -> None:
    """Issue 24, problem 10: after one qualifying heat the title said "semi-finals in
    progress; final in progress" for stages with no heats at all."""
    assert main(["tournament", "create", "Ridge", *db]) == 0
    schedule = ["heat", "schedule", *db, "-t", "Ridge", "--bank", "A", "--now", "2026-11-20 10:00"]
    assert main([*schedule, "--start", "2026-11-21 18:00"]) == 0
    capsys.readouterr()
    assert main(["tournament", "qualifiers", "Ridge", *db]) == 0
    title = " ".join(capsys.readouterr().out.split())  # the table may wrap its title
    assert "qualifying not started (1 heat scheduled)" in title
    assert "semi-finals no heats scheduled" in title
    assert "final no heats scheduled" in title
    assert "in progress" not in title
