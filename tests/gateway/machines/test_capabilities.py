"""Driver abilities are runtime-checkable protocols (gateway.machines.capabilities): the
SAS driver declares all of them by implementing them; the MQTT driver and a plain test
double none, and are driven the plain way."""

from __future__ import annotations

from emulators.machine import EmulatedMachine
from gateway.machines.capabilities import (
    ConnectedLink,
    CountedLink,
    LinkCounters,
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


def test_both_drivers_count_their_traffic_and_know_their_connection() -> None:
    sas = SasDriver.from_uri("C5", "sas+tcp://127.0.0.1:9?address=1")
    mqtt = MqttMachineDriver.from_uri("C6", "mqtt://127.0.0.1:1/site/C6")
    for driver in (sas, mqtt):
        assert isinstance(driver, CountedLink)
        assert isinstance(driver, ConnectedLink)
        assert driver.link_counters() == LinkCounters()  # nothing sent yet
        assert not driver.link_connected()  # never opened
    assert not isinstance(DirectDriver(EmulatedMachine("C7", seed=1)), CountedLink)


def test_link_counters_add_field_by_field() -> None:
    a = LinkCounters(polls=3, replies=2, timeouts=1, nacks=0, retries=1, failures=0)
    b = LinkCounters(polls=1, replies=1, timeouts=0, nacks=1, retries=1, failures=1)
    assert a + b == LinkCounters(polls=4, replies=3, timeouts=1, nacks=1, retries=2, failures=1)


def test_mqtt_driver_frames_its_start_and_stop_ahead_and_nothing_else() -> None:
    mqtt = MqttMachineDriver.from_uri("C2", "mqtt://127.0.0.1:1/site/C2")
    assert isinstance(mqtt, PreparedUnlock)
    assert isinstance(mqtt, PreparedLock)
    for ability in (TournamentMeterReader, PacedLink):
        assert not isinstance(mqtt, ability), ability.__name__
    assert min_spacing(mqtt) == 0.0


def test_plain_double_has_none() -> None:
    plain = DirectDriver(EmulatedMachine("C3", seed=1))
    for ability in (PreparedUnlock, PreparedLock, TournamentMeterReader, PacedLink):
        assert not isinstance(plain, ability), ability.__name__
    assert min_spacing(plain) == 0.0


def test_a_driver_may_offer_one_prepared_command_only() -> None:
    driver = PreparedDirectDriver(EmulatedMachine("C4", seed=1))
    assert isinstance(driver, PreparedUnlock)
    assert not isinstance(driver, PreparedLock)
