"""Host-timed heats on emulated EGMs that enforce AFT as real ones do (registration, asset
number, registration key), over real SAS/TCP sockets to a bank in another process.

* the gateway registers as each host-timed machine's AFT host in preflight (LP 73, the
  floor's key and POS ID), loads the heat's credits as restricted credits with the
  machine's asset number, scores them and sweeps every credit back at the end;
* a machine that refuses registration, waits for an acknowledgement nobody gives, or
  has no key in the floor file is a preflight blocker naming the reason, before the heat.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.app.cli import main
from gateway.app.context import GatewayContext, bank_links, close_links
from gateway.heats.preflight import check_bank
from gateway.heats.runner import HeatRunner
from storage import aft as aft_store
from storage.journal import RunState

from ..gateway.emulated import BankProcess, bank_host

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture
def started() -> Iterator[list[Any]]:
    made: list[Any] = []
    yield made
    for b in made:
        b.close()


def _bank(started: list[Any], machines: int, **kwargs: Any) -> Any:
    b = BankProcess(machines, **kwargs)
    started.append(b)
    return b


async def _open(tmp_path: Path, floor_toml: str) -> GatewayContext:
    floor = tmp_path / "floor.toml"
    floor.write_text(floor_toml)
    return await GatewayContext.open(
        database=f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}",
        floor_path=str(floor),
        spool=tmp_path / "spool",
        upgrade=True,
    )


async def test_host_timed_heat_on_machines_enforcing_aft(
    started: list[Any], tmp_path: Path
) -> None:
    bank = _bank(started, 3, host_timed=2, players=True)  # EMU-002, EMU-003: no LP 8C
    assets = {m["machine"]: m["asset_number"] for m in bank.machines}
    assert assets == {"EMU-001": 1001, "EMU-002": 1002, "EMU-003": 1003}
    # Strict machines: nobody registered yet, so the old transfer (asset 0, zero key)
    # would be refused with status 93.
    assert bank.ask("aft EMU-002 registration")["registration"] == "not_registered"
    ctx = await _open(tmp_path, bank.floor_toml())
    try:
        spec = ctx.bank("A")
        links, failed = await bank_links(spec)
        assert failed == {}
        try:
            checks = {c.machine_id: c for c in await check_bank(links)}
            assert all(c.ok for c in checks.values()), [c.blockers for c in checks.values()]
            assert checks["EMU-001"].aft is None  # native: no transfer, no registration
            for machine in ("EMU-002", "EMU-003"):
                reg = checks[machine].aft
                assert reg is not None
                assert (reg.registered, reg.asset_number, reg.pos_id) == (
                    True,
                    assets[machine],
                    bank_host.AFT_POS_ID,
                )
                state = bank.ask(f"aft {machine} registration")
                assert (state["registration"], state["pos_id"]) == ("registered", 7001)
            out = await HeatRunner(ctx.writer, links).run_new(
                "A", [m.id for m in spec.active], credits=500, seconds=2
            )
        finally:
            await close_links(links)
        assert out.state is RunState.CLOSED
        assert {m: s.support for m, s in out.seats.items()} == {
            "EMU-001": "native",
            "EMU-002": "host-timed",
            "EMU-003": "host-timed",
        }
        results = {r.machine_id: r for r in await ctx.journal.results(out.run_id)}
        assert sorted(results) == ["EMU-001", "EMU-002", "EMU-003"]
        for r in results.values():
            assert r.games_played > 0  # the loaded credits were played
            assert r.score == 500 - r.credits_wagered + r.credits_won  # T12
    finally:
        await ctx.close()
    for m in bank.ask("state")["machines"]:
        # swept back: no tournament credits, restricted or won, left on any machine (T18)
        assert (m["restricted"], m["cashable"], m["in_tournament"]) == (0, 0, False), m
        assert m["play_enabled"], m


def _cli(tmp_path: Path, floor_toml: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    floor = tmp_path / "floor.toml"
    floor.write_text(floor_toml)
    url = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
    assert main(["db", "upgrade", "--database", url]) == 0
    capsys.readouterr()
    return ["--floor", str(floor), "--database", url, "--spool", str(tmp_path / "spool")]


def _check(common: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["bank", "check", "A", *common, "--json"])
    return code, {c["machine_id"]: c for c in json.loads(capsys.readouterr().out)}


def test_a_machine_refusing_registration_blocks_the_bank_before_the_heat(
    started: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bank = _bank(started, 3, host_timed=2, aft_refuse=1)  # EMU-003 refuses
    common = _cli(tmp_path, bank.floor_toml(), capsys)
    code, checks = _check(common, capsys)
    assert code == 1
    assert checks["EMU-001"]["ok"]
    assert checks["EMU-002"]["ok"]
    assert checks["EMU-002"]["aft"]["status"] == "registered"
    assert checks["EMU-003"]["blockers"] == [
        "AFT registration refused: the machine refused AFT registration (80 not registered)"
    ]
    assert checks["EMU-003"]["aft"]["asset_number"] == 1003

    # The enable refuses, naming the machine and the reason; nothing is enabled.
    assert main(["bank", "enable", "A", *common]) == 2
    err = capsys.readouterr().err
    assert "EMU-003 blocked" in err
    assert "refused AFT registration" in err

    # EMU-002 now waits for an attendant's acknowledgement: blocked until given.
    bank.ask("aft EMU-002 unregister")
    bank.ask("aft EMU-002 await-ack")
    code, checks = _check(common, capsys)
    assert checks["EMU-002"]["blockers"] == [
        "AFT registration pending: registration waits for the operator's acknowledgement "
        "at the machine"
    ]
    assert bank.ask("aft EMU-002 ack")["registration"] == "registered"
    bank.ask("aft EMU-003 accept")  # the technician fixes EMU-003's AFT set-up
    code, checks = _check(common, capsys)
    assert code == 0, checks
    assert all(c["ok"] for c in checks.values())

    async def stored() -> dict[str, aft_store.RegistrationRow]:
        ctx = await GatewayContext.open(database=common[3], floor_path=None, spool=common[5])
        try:
            return await aft_store.load(ctx.sessions)
        finally:
            await ctx.close()

    rows = asyncio.run(stored())
    assert sorted(rows) == ["EMU-002", "EMU-003"]  # host-timed machines only
    assert rows["EMU-003"].registered
    assert rows["EMU-003"].asset_number == 1003
    assert rows["EMU-003"].registered_since is not None
    assert rows["EMU-002"].pos_id == bank_host.AFT_POS_ID


def test_host_timed_machines_without_aft_keys_in_the_floor_are_blocked(
    started: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bank = _bank(started, 2, host_timed=1)
    common = _cli(tmp_path, bank.floor_toml(aft=False), capsys)
    code, checks = _check(common, capsys)
    assert code == 1
    assert checks["EMU-001"]["ok"]  # native: needs no AFT
    assert checks["EMU-002"]["blockers"] == [
        "AFT registration not configured: no aft_registration_key / aft_pos_id for this "
        "machine or its bank in the floor file"
    ]
