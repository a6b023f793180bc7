"""``reelgate bank check|enable|disable`` against an emulated bank over SAS/TCP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.app.cli import main
from gateway.app.context import GatewayContext
from storage import audit

from ..emulated import BankProcess


@pytest.fixture
def bank() -> Iterator[Any]:
    with BankProcess(3, host_timed=1) as b:
        yield b


def _args(bank: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    floor = tmp_path / "floor.toml"
    floor.write_text(bank.floor_toml())
    url = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
    assert main(["db", "upgrade", "--database", url]) == 0
    capsys.readouterr()  # the upgrade's line
    return [
        "--floor", str(floor),
        "--database", url,
        "--spool", str(tmp_path / "spool"),
    ]  # fmt: skip


def test_check_enable_disable(
    bank: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = _args(bank, tmp_path, capsys)
    assert main(["bank", "check", "A", *common, "--json"]) == 0
    checks = {c["machine_id"]: c for c in json.loads(capsys.readouterr().out)}
    assert all(c["ok"] and c["answers"] for c in checks.values())
    assert checks["EMU-003"]["tournament"] == "host-timed"  # LP A0 bit 3 clear
    assert checks["EMU-001"]["tournament"] == "native"

    # A player leaves credits on EMU-002 and EMU-001's door is open: both block (sas.md §5).
    bank.ask("bill EMU-002 20")
    bank.ask("door EMU-001 open")
    assert main(["bank", "check", "A", *common, "--json"]) == 1
    checks = {c["machine_id"]: c for c in json.loads(capsys.readouterr().out)}
    assert checks["EMU-002"]["blockers"] == ["20 credits on the meter"]
    assert checks["EMU-001"]["blockers"] == ["door open/pending"]
    assert checks["EMU-003"]["ok"]

    # Enabling refuses while a machine blocks; nothing is changed.
    assert main(["bank", "enable", "A", *common]) == 2
    assert "not enabled" in capsys.readouterr().err
    # An exclusion needs its reason.
    assert main(["bank", "enable", "A", *common, "--exclude", "EMU-002"]) == 2
    assert "--reason" in capsys.readouterr().err
    bank.ask("door EMU-001 close")
    code = main(
        ["bank", "enable", "A", *common, "--exclude", "EMU-002", "--reason", "credits left",
         "--json"]
    )  # fmt: skip
    assert code == 0
    # Problem 7 (issue 24): the enable ends with one line saying what it did (stderr
    # after --json, so stdout stays one JSON document).
    out = capsys.readouterr()
    json.loads(out.out)
    assert out.err.strip() == "bank A enabled: 2 machines ready; EMU-002 (credits left) left out"

    async def stored() -> tuple[bool, list[str], list[tuple[str, str | None]]]:
        ctx = await GatewayContext.open(
            database=common[3], floor_path=None, spool=tmp_path / "spool"
        )
        try:
            spec = ctx.bank("A")
            async with ctx.sessions() as session:
                from sqlalchemy import select

                rows = (await session.scalars(select(audit.AuditEntry))).all()
            return spec.enabled, [m.id for m in spec.active], [(r.action, r.reason) for r in rows]
        finally:
            await ctx.close()

    enabled, active, rows = asyncio.run(stored())
    assert enabled
    assert active == ["EMU-001", "EMU-003"]
    assert ("bank.exclude-machine", "credits left") in rows  # the exclusion is in the audit log

    assert main(["bank", "disable", "A", *common]) == 0
    assert "every machine back in normal play" in capsys.readouterr().out
    for m in bank.ask("state")["machines"]:
        assert m["play_enabled"]
        assert not m["in_tournament"]
    enabled, active, rows = asyncio.run(stored())
    assert not enabled
    assert ("bank.disable", None) in rows


def test_emulate_writes_the_floor_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``emulate sas --floor-out FILE`` (problem 7): the floor file holds every printed
    endpoint, and the gateway's own floor parser reads it back."""
    from gateway.floor.model import load_floor_file

    out = tmp_path / "floor.toml"
    args = ["emulate", "sas", "--machines", "3", "--duration", "0.1", "--floor-out", str(out),
            "--bank-name", "B"]  # fmt: skip
    assert main(args) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    endpoints = {p["machine"]: p["endpoint"] for p in printed if "machine" in p}
    bank = load_floor_file(out).bank("B")
    assert {m.id: m.endpoint for m in bank.machines} == endpoints
    assert [m.id for m in bank.machines] == ["EMU-001", "EMU-002", "EMU-003"]
    assert main(["emulate", "sas", "--bank-name", "no spaces", "--floor-out", str(out)]) == 2
    assert "--bank-name" in capsys.readouterr().err
