"""Driver abilities are runtime-checkable protocols (gateway.machines.capabilities): the
SAS driver declares all of them by implementing them; the MQTT driver and a plain test
double none, and are driven the plain way."""

from __future__ import annotations

from emulators.machine import EmulatedMachine
from gateway.machines.capabilities import (
    PacedLink,
    PreparedCommands,
    PreparedLock,
    PreparedUnlock,
    TournamentMeterReader,
    min_spacing,
)
from gateway.machines.mqtt import MqttMachineDriver
from gateway.machines.sas import SasDriver

from ..direct_driver import DirectDriver, PreparedDirectDriver


def test_sas_driver_declares_every_ability() -> None:
    driver = SasDriver.from_uri("C1", "sas+tcp://127.0.0.1:9?address=1")
    for ability in (PreparedCommands, TournamentMeterReader, PacedLink):
        assert isinstance(driver, ability), ability.__name__
    assert min_spacing(driver) == driver.min_spacing > 0


def test_mqtt_driver_and_plain_double_have_none() -> None:
    mqtt = MqttMachineDriver.from_uri("C2", "mqtt://127.0.0.1:1/site/C2")
    plain = DirectDriver(EmulatedMachine("C3", seed=1))
    for driver in (mqtt, plain):
        for ability in (PreparedUnlock, PreparedLock, TournamentMeterReader, PacedLink):
            assert not isinstance(driver, ability), (driver, ability.__name__)
        assert min_spacing(driver) == 0.0


def test_a_driver_may_offer_one_prepared_command_only() -> None:
    driver = PreparedDirectDriver(EmulatedMachine("C4", seed=1))
    assert isinstance(driver, PreparedUnlock)
    assert not isinstance(driver, PreparedLock)


