"""SNMP health wired into the floor, the bank check and the heats (issue 5, T20/T21).

* the floor file's ``snmp`` (v2c community or v3 authPriv user) is validated, stored
  without its secrets and loaded back (the file seeds, the database is the truth); the
  secrets come with the run (``tests/gateway/floor/test_snmp_secrets.py``);
* ``bank check``'s health preflight polls each board's real agent over UDP;
* a door opened mid-heat reported by the machine itself (SAS exception / board event)
  ends that seat's heat just as an SNMP trap does, and the heat goes on for the others;
* a link-down trap reaches the heat only if the link stays down (a broker restart is
  not a machine's malfunction).

Clauses: docs/rules.md#t20, #t21.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.machine import EmulatedMachine, MachineRefusal
from emulators.snmp_agent import SnmpAgent
from gateway.errors import OperatorError
from gateway.floor.model import MachineSpec, parse_floor, resolve_snmp
from gateway.floor.snmp import SnmpSecrets, parse_snmp
from gateway.floor.store import load_floor, sync_floor
from gateway.heats.preflight import MachineCheck, add_health
from gateway.heats.runner import HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.driver import MachineEvent, MachineEventKind
from gateway.machines.health import HealthMonitor, board_problems, route_events
from gateway.machines.links import MachineLink
from protocols.snmp.manager import HealthPoller, SnmpTarget, TrapReceiver
from protocols.snmp.security import V2cCommunity, V3User
from storage.db import make_sessionmaker
from storage.journal import Journal, MachineState, RunState

from ..direct_driver import DirectDriver


def _floor(extra: str) -> str:
    return (
        '[[bank]]\nname = "A"\nmachines = [\n'
        f'  {{ id = "A01", endpoint = "sas+tcp://127.0.0.1:7001"{extra} }},\n'
        '  { id = "A02", endpoint = "sas+tcp://127.0.0.1:7002" },\n]\n'
    )


def test_floor_snmp_v3_and_v2c_round_trip() -> None:
    v3 = parse_floor(
        _floor(', snmp = "udp://127.0.0.1:1161", snmp_user = "ops", '
               'snmp_auth = "auth-pass-1", snmp_priv = "priv-pass-1"')
    )  # fmt: skip
    a01 = v3.machine("A01")
    assert a01.snmp == "udp://127.0.0.1:1161?user=ops"  # the stored form: no passphrase
    endpoint = a01.snmp_endpoint(v3.secrets)  # the inline secrets, for this run
    assert endpoint is not None
    assert (endpoint.host, endpoint.port) == ("127.0.0.1", 1161)
    assert endpoint.security == V3User("ops", "auth-pass-1", "priv-pass-1")
    v2c = parse_floor(_floor(', snmp = "udp://127.0.0.1:1162", community = "public"'))
    assert v2c.machine("A01").snmp == "udp://127.0.0.1:1162?version=2c"  # no community
    assert v2c.machine("A02").snmp is None  # a machine without an agent
    found = v2c.machine("A01").snmp_endpoint(v2c.secrets)
    assert found is not None
    assert found.security == V2cCommunity("public")
    full = parse_snmp("udp://127.0.0.1:1162", community="public")
    assert full.security == V2cCommunity("public")


@pytest.mark.parametrize(
    ("extra", "names"),
    [
        (', snmp = "udp://127.0.0.1:1161"', "needs snmp_user (v3 authPriv"),
        (', snmp = "udp://127.0.0.1:1161", snmp_user = "ops", snmp_auth = "aaaaaaaa"', "both"),
        (', snmp = "tcp://127.0.0.1:1161", community = "c"', "udp://host:port"),
        (', snmp = "udp://127.0.0.1:99999", community = "c"', "port"),
        (', community = "public"', "without snmp"),
        (', snmp = "udp://127.0.0.1:1161", community = ""', "community is empty"),
        (', snmp = 161, community = "c"', "snmp must be a string"),
        (
            ', snmp = "udp://h:1", community = "c", snmp_user = "u", snmp_auth = "aaaaaaaa",'
            ' snmp_priv = "pppppppp"',
            "not both",
        ),
        (
            ', snmp = "udp://h:1", snmp_user = "u", snmp_auth = "short", snmp_priv = "pppppppp"',
            "at least 8",
        ),
        (', snmp = "udp://h:1?colour=red", community = "c"', "unknown option 'colour'"),
    ],
)
def test_bad_snmp_settings_name_the_machine_and_field(extra: str, names: str) -> None:
    with pytest.raises(OperatorError, match="A01") as caught:
        parse_floor(_floor(extra))
    assert names in str(caught.value)


async def test_snmp_endpoint_is_stored_and_seeds_a_machine_stored_without(
    engine: AsyncEngine,
) -> None:
    sessions = make_sessionmaker(engine)
    await sync_floor(sessions, parse_floor(_floor("")))  # stored before SNMP was known
    assert (await load_floor(sessions)).machine("A01").snmp is None
    seeded = await sync_floor(
        sessions, parse_floor(_floor(', snmp = "udp://127.0.0.1:1162", community = "public"'))
    )
    assert seeded.machine("A01").snmp == "udp://127.0.0.1:1162?version=2c"
    # Once stored, the database is the truth: the file does not overwrite it.
    again = await sync_floor(
        sessions, parse_floor(_floor(', snmp = "udp://127.0.0.1:1999", community = "x"'))
    )
    assert again.machine("A01").snmp == "udp://127.0.0.1:1162?version=2c"


def _spec(machine_id: str, port: int) -> MachineSpec:
    return MachineSpec(
        machine_id, "sas+tcp://127.0.0.1:1", "A", 1, snmp=f"udp://127.0.0.1:{port}?version=2c"
    )


async def test_bank_check_health_polls_the_boards_agents() -> None:
    ok, door = EmulatedMachine("A01", seed=1), EmulatedMachine("A02", seed=2)
    agents = [SnmpAgent(m, users=[V2cCommunity("public")]) for m in (ok, door)]
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # an agent that never answers
    silent.bind(("127.0.0.1", 0))
    silent_port = silent.getsockname()[1]
    try:
        for agent in agents:
            await agent.start()
        door.open_slot_door()
        machines = [
            _spec("A01", agents[0].port),
            _spec("A02", agents[1].port),
            _spec("A03", silent_port),
            MachineSpec("A04", "sas+tcp://127.0.0.1:1", "A", 4),  # no agent: SAS checks only
        ]
        # v2c community per machine for A01, per endpoint for the others.
        secrets = SnmpSecrets(
            machines={"A01": "public"},
            endpoints={f"udp://127.0.0.1:{p}": "public" for p in (agents[1].port, silent_port)},
        )
        problems = await board_problems(resolve_snmp(machines, secrets), snmp_timeout=0.2)
    finally:
        silent.close()
        for agent in agents:
            agent.close()
    assert problems["A01"] == []
    assert problems["A02"] == ["slot door open"]
    assert len(problems["A03"]) == 1
    assert problems["A03"][0].startswith("SNMP: ")
    assert "A04" not in problems
    checks = [MachineCheck(m, answers=True) for m in ("A01", "A02", "A03", "A04")]
    add_health(checks, problems)
    assert [c.ok for c in checks] == [True, False, False, True]
    assert checks[1].blockers == ["snmp: slot door open"]


@pytest.fixture
async def journal(engine: AsyncEngine) -> Journal:
    return Journal(make_sessionmaker(engine))


async def _players(machines: list[EmulatedMachine], stop: asyncio.Event) -> None:
    while not stop.is_set():  # bounded by ``stop``
        for m in machines:
            with contextlib.suppress(MachineRefusal):
                if m.play_enabled() and m.credits > 0:
                    m.spin(1)
        await asyncio.sleep(0.01)


async def test_door_opened_mid_heat_by_sas_ends_that_seat_only(
    journal: Journal, tmp_path: Path
) -> None:
    machines = [EmulatedMachine(f"A0{i}", seed=i) for i in (1, 2, 3)]
    links = {
        m.machine_id: MachineLink(m.machine_id, DirectDriver(m), attempts=2, budget_s=0.3)
        for m in machines
    }
    runner = HeatRunner(JournalWriter(journal, tmp_path / "spool"), links, poll_interval_s=0.05)
    stop = asyncio.Event()
    players = asyncio.create_task(_players(machines, stop))

    async def open_door_mid_heat() -> None:
        for _ in range(200):  # bounded: until the heat runs
            if getattr(runner, "out", None) is not None and runner.out.state is RunState.RUNNING:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)
        machines[1].open_slot_door()  # reported as a SAS door exception (0x11)

    opener = asyncio.create_task(open_door_mid_heat())
    try:
        out = await runner.run_new("A", list(links), credits=300, seconds=2)
    finally:
        stop.set()
        await asyncio.gather(players, opener)
    assert out.state is RunState.CLOSED
    assert out.seats["A02"].error == "machine reported door-opened"  # T20
    assert out.seats["A02"].score is None
    scored = {r.machine_id for r in await journal.results(out.run_id)}
    assert scored == {"A01", "A03"}  # the heat went on for the others
    # An event about a seat that is no longer playing changes nothing.
    late = MachineEvent("A01", MachineEventKind.DOOR_OPENED, out.started_at)  # type: ignore[arg-type]
    assert runner.report_event(late) is False
    assert out.seats["A01"].state is MachineState.RELEASED


async def test_link_down_trap_reaches_the_heat_only_if_the_link_stays_down() -> None:
    """A board's link blinking (a broker restart) is no malfunction; one that stays down
    is (T20).  Real traps from a real agent whose link state the test flips."""
    machine = EmulatedMachine("A01", seed=1)
    link = {"up": True}
    monitor = HealthMonitor(TrapReceiver(), HealthPoller(timeout=0.5))
    trap_port = await monitor.start()
    agent = SnmpAgent(machine, users=[V2cCommunity("public")], link_up=lambda: link["up"],
                      trap_targets=[("127.0.0.1", trap_port)])  # fmt: skip
    delivered: list[MachineEventKind] = []
    router: asyncio.Task[None] | None = None
    try:
        await agent.start()
        await monitor.add_board(SnmpTarget("A01", "127.0.0.1", agent.port, V2cCommunity("public")))
        router = asyncio.create_task(
            route_events(monitor, lambda e: delivered.append(e.kind), link_grace_s=1.0)
        )
        await asyncio.sleep(0.05)  # subscribed
        link["up"] = False
        await asyncio.sleep(0.4)  # LINK_DOWN sent and held
        link["up"] = True
        for _ in range(100):  # bounded: until LINK_UP arrived
            if delivered:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(1.2)  # past the grace period
        assert delivered == [MachineEventKind.LINK_UP]  # the blink never reached a heat
        link["up"] = False
        for _ in range(150):  # bounded: the grace period and a little more
            if MachineEventKind.LINK_DOWN in delivered:
                break
            await asyncio.sleep(0.02)
        assert delivered == [MachineEventKind.LINK_UP, MachineEventKind.LINK_DOWN]
        assert monitor.is_marked("A01")  # preflight refuses it until a technician clears it
    finally:
        if router is not None:
            router.cancel()
            await asyncio.gather(router, return_exceptions=True)
        agent.close()
        monitor.close()
