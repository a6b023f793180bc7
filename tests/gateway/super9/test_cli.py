"""``reelgate super9 …`` end to end on an embedded SQLite file (migrated like production)."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path

import pytest
from sqlalchemy import select

from gateway.app.cli import main
from gateway.app.identity import host_login, os_account
from storage import migrate
from storage.audit import AuditEntry
from storage.db import make_engine, make_sessionmaker
from storage.tournament import Player
from tests.keyed_engine import make_engine as keyed_engine

from ..training_db import PASSWORD, add_accounts, cheap_hashes, make_training, type_passwords


def _seed_player(url: str) -> None:
    async def go() -> None:
        engine = keyed_engine(url)
        async with make_sessionmaker(engine).begin() as db:
            db.add(
                Player(
                    id_number="8001015009087",
                    card_number="C1",
                    name="Thandi",
                    date_of_birth=date(1980, 1, 1),
                )
            )
        await engine.dispose()

    asyncio.run(go())


def _training_desk(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A training database (the script keys its own times) with the second persons:
    a supervisor who confirms manual spins (S9-29) and a promotion director who
    witnesses the prize receipt (S9-26), each typing a password on standard input."""
    migrate.upgrade(url)
    make_training(url)
    _seed_player(url)
    cheap_hashes(monkeypatch)
    add_accounts(
        url, ("sup", "supervisor"), ("pd", "promotion-director"), ("deal", "dealer"),
        ("cash", "cashier"),
    )  # fmt: skip
    type_passwords(monkeypatch, *[PASSWORD] * 40)


def test_cli_session_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'r.db'}"
    _training_desk(url, monkeypatch)
    db = ["--database", url]

    def run(*argv: str) -> str:
        assert main(["super9", *argv, *db]) == 0
        return capsys.readouterr().out

    run("calendar", "--from", "2026-12-02", "--days", "1")
    run(
        "sell",
        "--ticket",
        "T1",
        "--player",
        "C1",
        "--now",
        "2026-12-02T10:00+02:00",
    )
    run(
        "hand-in",
        "--ticket",
        "T1",
        "--numbers",
        "1 2 3 4 5 6 7 8 9",
        "--name",
        "Player 1",
        "--id",
        "C1",
        "--contact",
        "082 555 0100",
        "--signed",
        "--now",
        "2026-12-02T18:00+02:00",
    )
    assert "drawing" in run(
        "open",
        "--session-at",
        "2026-12-02T19:00+02:00",
        "--now",
        "2026-12-02T19:00+02:00",
    )
    for n in range(1, 10):
        out = run(
            "manual-spin",
            "--session",
            "1",
            "--number",
            str(n),
            "--confirm",
            str(n),
            "--as",
            "deal",
            "--confirmed-by",
            "sup",
            "--reason",
            "wheel sensor down (rule 29)",
            "--now",
            "2026-12-02T19:10+02:00",
        )
    assert "complete: T1" in out
    claim = json.loads(
        run(
            "claim",
            "--session",
            "1",
            "--ticket",
            "T1",
            "--duplicate",
            "1 2 3 4 5 6 7 8 9",
            "--json",
            "--now",
            "2026-12-02T19:11+02:00",
        )
    )
    assert claim == {"ticket": "T1", "valid": True, "complete": True, "reason": None}
    report = json.loads(
        run(
            "close",
            "--session",
            "1",
            "--json",
            "--now",
            "2026-12-02T19:30+02:00",
        )
    )
    # One ticket, R50: jackpot R5,000 (S9-14) + consolation R12.50 (S9-16).
    assert report["result"]["payouts"] == [
        {"ticket": "T1", "kind": "jackpot", "amount_cents": 500_000},
        {"ticket": "T1", "kind": "consolation", "amount_cents": 1_250},
    ]
    run(
        "sign",
        "--session",
        "1",
        "--ticket",
        "T1",
        "--kind",
        "jackpot",
        "--signature",
        "slip 77",
        "--signer",
        "C1",
        "--as",
        "cash",
        "--witness",
        "pd",
    )
    jackpot = json.loads(run("jackpot", "--history", "--json"))
    assert jackpot["jackpot_cents"] == 500_000  # restarts at exactly R5,000 (S9-15 default)
    text = run("report", "--session", "1")
    assert "R5,000.00" in text
    assert "closed" in text


def test_cli_operator_error_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'r.db'}"
    assert main(["db", "init", "--training", "--database", url]) == 0
    assert "TRAINING" in capsys.readouterr().err
    code = main(
        [
            "super9",
            "sell",
            "--ticket",
            "X",
            "--player",
            "nobody",
            "--now",
            "2026-11-29T10:00+02:00",
            "--database",
            url,
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert "rule 6" in err


@pytest.mark.mosquitto
def test_cli_publishes_live_draw_to_broker(
    tmp_path: Path,
    mqtt_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import uuid

    import aiomqtt

    from protocols.mqtt.client import MqttSettings
    from protocols.mqtt.topics import feed_topic

    url = f"sqlite+aiosqlite:///{tmp_path / 'r.db'}"
    _training_desk(url, monkeypatch)
    site = f"s9-{uuid.uuid4().hex[:8]}"
    common = ["--database", url]
    assert (
        main(
            [
                "super9",
                "sell",
                "--ticket",
                "T1",
                "--player",
                "C1",
                "--now",
                "2026-12-02T10:00+02:00",
                *common,
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "super9",
                "hand-in",
                "--ticket",
                "T1",
                "--numbers",
                "1 2 3 4 5 6 7 8 9",
                "--name",
                "Player 1",
                "--id",
                "C1",
                "--contact",
                "082 555 0100",
                "--signed",
                "--now",
                "2026-12-02T18:00+02:00",
                *common,
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "super9",
                "open",
                "--session-at",
                "2026-12-02T19:00+02:00",
                "--now",
                "2026-12-02T19:00+02:00",
                *common,
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "super9",
                "manual-spin",
                "--session",
                "1",
                "--number",
                "7",
                "--confirm",
                "7",
                "--as",
                "deal",
                "--confirmed-by",
                "sup",
                "--reason",
                "rule 29 test",
                "--mqtt",
                mqtt_url,
                "--site",
                site,
                *common,
            ]
        )
        == 0
    )
    capsys.readouterr()
    settings = MqttSettings.from_url(mqtt_url)

    async def retained() -> dict[str, object]:
        async with aiomqtt.Client(settings.host, settings.port) as client:
            topic = feed_topic(site, "super9/1/draw")
            await client.subscribe(topic)
            async with asyncio.timeout(10):
                async for message in client.messages:
                    assert isinstance(message.payload, bytes)
                    payload: dict[str, object] = json.loads(message.payload)
                    await client.publish(topic, b"", retain=True)  # clean up the retained copy
                    return payload
        raise AssertionError("no retained draw message")

    payload = asyncio.run(retained())
    assert payload["called"] == [7]
    assert payload["status"] == "drawing"


def test_cli_words_for_sale_hand_in_and_a_rule_9_top_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24, problem 10: a sale names its session's day and time (it printed
    "session 1", a row id); a top copy with a number twice is a recorded S9-9
    disqualification: said as such, exit 1 — not exit 2, "bad input, nothing changed"."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'r.db'}"
    _training_desk(url, monkeypatch)
    db = ["--database", url]
    for serial in ("T1", "T2"):
        assert main(["super9", "sell", "--ticket", serial, "--player", "C1", *db,
                     "--now", "2026-12-02T10:00+02:00"]) == 0  # fmt: skip
        assert capsys.readouterr().out.strip() == (
            f"ticket {serial} sold for the session of Wed 2 Dec 2026 19:00"
        )
    section = ["--name", "Player 1", "--id", "C1", "--contact", "082 555 0100", "--signed"]
    code = main(["super9", "hand-in", "--ticket", "T1", "--numbers", "1 2 3 4 5 6 7 8 8",
                 *section, *db, "--now", "2026-12-02T18:00+02:00"])  # fmt: skip
    out = capsys.readouterr()
    assert code == 1
    assert out.out.startswith("NOT entered: ticket T1: rule 9")
    assert "tickets T1, T2" in out.out
    assert "error" not in out.err
    assert main(["super9", "disqualify", "--ticket", "T2", "--rule", "21", "--reason", "x",
                 *db, "--now", "2026-12-02T18:01+02:00"]) == 2  # fmt: skip
    assert "already disqualified" in capsys.readouterr().err  # the decision was kept


def _audit_rows(url: str, action: str) -> list[AuditEntry]:
    async def go() -> list[AuditEntry]:
        engine = make_engine(url)
        try:
            async with make_sessionmaker(engine)() as s:
                query = select(AuditEntry).where(AuditEntry.action == action)
                return list((await s.scalars(query)).all())
        finally:
            await engine.dispose()

    return asyncio.run(go())


def test_host_manual_spin_needs_two_accounts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """S9-29, audit 25.5: on the host the first person was only the OS login, so whoever
    held it and a Reelgate account of the same name keyed and confirmed a spin alone.  The
    first person now signs in as an account (--as), and the second must be another one."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'r.db'}"
    _training_desk(url, monkeypatch)
    me = os_account()
    add_accounts(url, (me, "supervisor"))  # the host login's namesake account
    db = ["--database", url]

    def run(*argv: str) -> tuple[int, str]:
        code = main(["super9", *argv, *db])
        out = capsys.readouterr()
        return code, out.out if code == 0 else out.err

    assert (
        run("sell", "--ticket", "T1", "--player", "C1", "--now", "2026-12-02T10:00+02:00")[0] == 0
    )
    hand_in = ("hand-in", "--ticket", "T1", "--numbers", "1 2 3 4 5 6 7 8 9", "--name", "P 1",
               "--id", "C1", "--contact", "082 555 0100", "--signed",
               "--now", "2026-12-02T18:00+02:00")  # fmt: skip
    assert run(*hand_in)[0] == 0
    opened = run(
        "open", "--session-at", "2026-12-02T19:00+02:00", "--now", "2026-12-02T19:00+02:00"
    )
    assert opened[0] == 0
    spin = ("manual-spin", "--session", "1", "--number", "4", "--confirm", "4",
            "--reason", "wheel sensor down", "--now", "2026-12-02T19:10+02:00")  # fmt: skip
    code, err = run(*spin, "--confirmed-by", me)
    assert code == 2
    assert "--as: name your own account" in err
    assert err.count("\n") == 1
    for alias in (me, f" {me.upper()} "):  # the same account under any spelling
        code, err = run(*spin, "--as", me, "--confirmed-by", alias)
        assert code == 2
        assert "not the --as account" in err
    code, err = run(*spin, "--as", "pd", "--confirmed-by", "sup")
    assert code == 2
    assert "--as pd: must be dealer, supervisor, not promotion-director" in err
    assert _audit_rows(url, "super9.spin.manual") == []
    code, _ = run(*spin, "--as", "deal", "--confirmed-by", me)
    assert code == 0
    (row,) = _audit_rows(url, "super9.spin.manual")
    assert row.actor == "deal"
    details = row.details_dict()
    assert details["first_person"] == {"account": "deal", "role": "dealer", "host": host_login()}
    assert details["second_person"]["account"] == me
