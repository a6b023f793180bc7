"""The SNMP manager without an agent: MIB value decoding, the poll's retry policy and the
trap receiver's filtering (``protocols/snmp/manager.py``).  The same code against a real
agent over UDP is in ``test_agent_and_health.py``."""

from __future__ import annotations

from typing import Any

import pytest
from pysnmp.proto import rfc1902

from protocols.snmp import mib
from protocols.snmp.errors import SnmpAuthError, SnmpProtocolError, SnmpTimeout
from protocols.snmp.manager import (
    BoardHealth,
    HealthPoller,
    SnmpTarget,
    TrapReceiver,
    board_health,
    decode_value,
)
from protocols.snmp.mib import (
    SNMP_TRAP_OID_0,
    SYS_UPTIME_0,
    BoardTrap,
    DoorState,
    LinkState,
    Notification,
    PowerState,
    TournamentMode,
)
from protocols.snmp.security import V2cCommunity, V3User

PUBLIC = V2cCommunity("public")
OPS = V3User("ops", "auth-pass-123", "priv-pass-456")
TARGET = SnmpTarget("A01", "127.0.0.1", 1, PUBLIC)  # never contacted: get is replaced

VALUES: dict[str, int | str] = {
    "rgMachineId": "A01",
    "rgTournamentMode": 3,
    "rgHeatId": "17",
    "rgLinkState": 1,
    "rgCredits": 480,
    "rgLastException": "",
    "rgUptime": 12345,
    "rgDoorState": 1,
    "rgPowerState": 1,
}


def _wire(values: dict[str, int | str]) -> dict[tuple[int, ...], Any]:
    """``values`` as the pysnmp objects an agent's GET response carries."""
    syntax = {
        mib.Syntax.DISPLAY_STRING: rfc1902.OctetString,
        mib.Syntax.INTEGER: rfc1902.Integer32,
        mib.Syntax.UNSIGNED32: rfc1902.Unsigned32,
        mib.Syntax.TIMETICKS: rfc1902.TimeTicks,
    }
    return {mib.BY_NAME[n].instance: syntax[mib.BY_NAME[n].syntax](v) for n, v in values.items()}


def test_decode_value_turns_pysnmp_values_into_int_or_text() -> None:
    assert decode_value(rfc1902.OctetString("door-opened")) == "door-opened"
    assert decode_value(rfc1902.OctetString(b"\xff")) == "\ufffd"  # never raises
    assert decode_value(rfc1902.ObjectIdentifier(Notification.LINK_UP.oid)) == ".".join(
        str(x) for x in Notification.LINK_UP.oid
    )
    assert decode_value(rfc1902.Integer32(-2)) == -2
    assert decode_value(rfc1902.Unsigned32(4_000_000_000)) == 4_000_000_000
    assert decode_value(rfc1902.TimeTicks(99)) == 99
    assert decode_value(7) == 7
    assert decode_value("x") == "x"


def test_board_health_decodes_the_mib_enums() -> None:
    health = board_health("A01", VALUES)
    assert health == BoardHealth(
        machine_id="A01",
        mode=TournamentMode.PLAYING,
        heat_id="17",
        link=LinkState.UP,
        credits=480,
        last_exception="",
        uptime_s=123.45,  # TimeTicks are hundredths of a second
        door=DoorState.CLOSED,
        power=PowerState.ON,
    )
    assert health.problems() == []


@pytest.mark.parametrize(
    ("change", "names"),
    [
        ({"rgDoorState": 3}, "A01: bad REELGATE-MIB value"),
        ({"rgTournamentMode": 0}, "A01: bad REELGATE-MIB value"),
        ({"rgCredits": "lots"}, "A01: bad REELGATE-MIB value"),
    ],
)
def test_out_of_range_values_are_protocol_errors(change: dict[str, int | str], names: str) -> None:
    with pytest.raises(SnmpProtocolError, match=names):
        board_health("A01", {**VALUES, **change})


def test_missing_scalar_is_a_protocol_error() -> None:
    partial = {k: v for k, v in VALUES.items() if k != "rgPowerState"}
    with pytest.raises(SnmpProtocolError, match="rgPowerState"):
        board_health("A01", partial)


def test_problems_name_every_fault_in_a_fixed_order() -> None:
    faulty = board_health("A01", {**VALUES, "rgLinkState": 2, "rgPowerState": 2, "rgDoorState": 2})
    assert faulty.problems() == ["link to gateway down", "no mains power", "slot door open"]


class _ScriptedPoller(HealthPoller):
    """A poller whose GET answers from a script: an exception to raise or values."""

    def __init__(self, script: list[BaseException | dict[str, int | str]]) -> None:
        super().__init__(attempts=3, budget_s=60)
        self.script = script
        self.calls = 0

    async def get(self, target: SnmpTarget, *oids: tuple[int, ...]) -> dict[tuple[int, ...], Any]:
        step = self.script[self.calls]
        self.calls += 1
        if isinstance(step, BaseException):
            raise step
        return _wire(step)


async def test_poll_retries_timeouts_then_reads_the_board() -> None:
    poller = _ScriptedPoller([SnmpTimeout("lost"), SnmpTimeout("lost"), VALUES])
    health = await poller.poll(TARGET)
    assert poller.calls == 3
    assert (health.mode, health.credits, health.uptime_s) == (TournamentMode.PLAYING, 480, 123.45)


async def test_poll_gives_up_after_its_attempts() -> None:
    poller = _ScriptedPoller([SnmpTimeout("1"), SnmpTimeout("2"), SnmpTimeout("3"), VALUES])
    with pytest.raises(SnmpTimeout, match="3"):
        await poller.poll(TARGET)
    assert poller.calls == 3


async def test_auth_and_protocol_errors_are_not_retried() -> None:
    auth = _ScriptedPoller([SnmpAuthError("wrong keys"), VALUES])
    with pytest.raises(SnmpAuthError):
        await auth.poll(TARGET)
    assert auth.calls == 1
    bad = _ScriptedPoller([{**VALUES, "rgLinkState": 9}, VALUES])
    with pytest.raises(SnmpProtocolError):
        await bad.poll(TARGET)
    assert bad.calls == 1


VarBinds = list[tuple[tuple[int, ...], int | str]]


def _door_trap_varbinds(mode: int = 3) -> VarBinds:
    return [
        (SYS_UPTIME_0, 1234),
        (SNMP_TRAP_OID_0, ".".join(str(x) for x in Notification.DOOR_OPENED.oid)),
        (mib.BY_NAME["rgMachineId"].instance, "A01"),
        (mib.BY_NAME["rgDoorState"].instance, 2),
        (mib.BY_NAME["rgHeatId"].instance, "17"),
        (mib.BY_NAME["rgTournamentMode"].instance, mode),
    ]


def test_receiver_hands_each_well_formed_trap_on() -> None:
    got: list[BoardTrap] = []
    receiver = TrapReceiver(on_trap=got.append)
    trap = receiver.note(_door_trap_varbinds(), security_model=2, security_level=1)
    assert got == [trap]
    assert trap == BoardTrap(Notification.DOOR_OPENED, "A01", "17", TournamentMode.PLAYING, 1234)
    assert trap.mid_heat
    assert receiver.note(_door_trap_varbinds(), security_model=3, security_level=3) is not None
    assert (receiver.stats.received, receiver.stats.malformed) == (2, 0)


def test_receiver_drops_v3_traps_below_auth_priv() -> None:
    got: list[BoardTrap] = []
    receiver = TrapReceiver(on_trap=got.append)
    for level in (1, 2):  # noAuthNoPriv, authNoPriv
        assert receiver.note(_door_trap_varbinds(), security_model=3, security_level=level) is None
    assert got == []
    assert (receiver.stats.received, receiver.stats.below_auth_priv) == (2, 2)


def test_receiver_drops_malformed_traps() -> None:
    got: list[BoardTrap] = []
    receiver = TrapReceiver(on_trap=got.append)
    no_oid = [vb for vb in _door_trap_varbinds() if vb[0] != SNMP_TRAP_OID_0]
    assert receiver.note(no_oid, security_model=2, security_level=1) is None
    assert receiver.note(_door_trap_varbinds(mode=9), security_model=2, security_level=1) is None
    assert got == []
    assert (receiver.stats.received, receiver.stats.malformed) == (2, 2)


class _EngineIds(HealthPoller):
    def __init__(self, answer: bytes | BaseException) -> None:
        super().__init__()
        self.answer = answer

    async def engine_id(self, target: SnmpTarget) -> bytes:
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


async def test_accept_needs_a_started_receiver_unless_its_own_community() -> None:
    receiver = TrapReceiver(v2c=PUBLIC)
    await receiver.accept(TARGET, _EngineIds(b"x"))  # the receiver's own community: nothing to add
    with pytest.raises(RuntimeError, match="not started"):
        await receiver.accept(SnmpTarget("A02", "127.0.0.1", 1, V2cCommunity("other")),
                              _EngineIds(b"x"))  # fmt: skip
    with pytest.raises(RuntimeError, match="not started"):
        await receiver.accept(SnmpTarget("A03", "127.0.0.1", 1, OPS), _EngineIds(b"\x80\x00"))


async def test_accept_of_a_v3_board_that_does_not_answer_raises_its_error() -> None:
    receiver = TrapReceiver()
    await receiver.start()
    try:
        with pytest.raises(SnmpTimeout):
            await receiver.accept(SnmpTarget("A03", "127.0.0.1", 1, OPS),
                                  _EngineIds(SnmpTimeout("no answer")))  # fmt: skip
        # a board that answers: its user is added under its engine id, once however often
        poller = _EngineIds(b"\x80\x00\x1f\x88\x04board")
        await receiver.accept(SnmpTarget("A03", "127.0.0.1", 1, OPS), poller)
        await receiver.accept(SnmpTarget("A03", "127.0.0.1", 1, OPS), poller)
    finally:
        receiver.close()
