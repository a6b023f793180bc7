"""The MQTT driver tests run against the emulated boards of the protocol tests."""

from tests.protocols.mqtt.conftest import boards, broker, site

__all__ = ["boards", "broker", "site"]
