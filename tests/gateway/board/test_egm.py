"""The EGM's state as the board keeps it from SAS exceptions (no poll needed)."""

from __future__ import annotations

from datetime import UTC, datetime

from gateway.board.clock import GatewayClock
from gateway.board.egm import EgmMachine
from gateway.machines.driver import MachineEvent, MachineEventKind
from gateway.machines.sas import SasDriver
from protocols.mqtt.codec import BoardEventKind

K = MachineEventKind
AT = datetime(2026, 12, 1, tzinfo=UTC)


def _egm() -> EgmMachine:
    driver = SasDriver.from_uri("E01", "sas+tcp://127.0.0.1:9?address=1")  # never opened
    return EgmMachine("E01", driver, GatewayClock(system=lambda: AT))


def _ev(kind: MachineEventKind, code: int | None = None) -> MachineEvent:
    return MachineEvent("E01", kind, AT, code)


def test_exceptions_fold_into_state_and_map_to_board_events() -> None:
    egm = _egm()
    assert egm.apply(_ev(K.DOOR_OPENED, 0x11)) is BoardEventKind.DOOR_OPENED
    assert egm.apply(_ev(K.TILT, 0x20)) is BoardEventKind.TILT
    assert egm.apply(_ev(K.HANDPAY_PENDING, 0x51)) is BoardEventKind.HANDPAY_PENDING
    state = egm.state(1)
    assert (state.door_open, state.tilted, state.handpay_pending) == (True, True, True)
    assert egm.apply(_ev(K.GAME_STARTED, 0x7E)) is BoardEventKind.GAME_STARTED
    state = egm.state(2)
    assert state.game_in_progress
    assert not state.tilted  # SAS has no "tilt cleared": playing again clears it
    egm.apply(_ev(K.DOOR_CLOSED, 0x12))
    egm.apply(_ev(K.POWER_LOST, 0x18))
    state = egm.state(3)
    assert not state.door_open
    assert not state.powered
    assert state.at == AT  # the board's clock


def test_codes_without_a_board_event_change_nothing() -> None:
    egm = _egm()
    assert egm.apply(_ev(K.OTHER, 0x3D)) is None
    assert egm.state(1).tournament is None


def test_out_of_service_and_operator_menu_reach_the_gateway() -> None:
    # A malfunction on a wired machine (T20) must be one behind a board too.
    egm = _egm()
    assert egm.apply(_ev(K.OUT_OF_SERVICE, 0x86)) is BoardEventKind.OUT_OF_SERVICE
    assert egm.apply(_ev(K.OPERATOR_MENU, 0x84)) is BoardEventKind.OPERATOR_MENU
