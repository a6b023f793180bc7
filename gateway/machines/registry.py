"""Open a :class:`~gateway.machines.driver.MachineDriver` from a machine's endpoint URI.

The URI scheme picks the driver.  Each entry maps a scheme to a factory
``(machine_id, endpoint_uri) -> MachineDriver``; a new protocol adds one line to
:data:`FACTORIES` (factories import their module lazily, so the registry stays cheap
to import and one protocol's dependencies never load for another).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from gateway.errors import OperatorError
from gateway.machines.driver import MachineDriver

DriverFactory = Callable[[str, str], MachineDriver]


def _sas(machine_id: str, endpoint_uri: str) -> MachineDriver:
    from gateway.machines.sas import SasDriver

    return SasDriver.from_uri(machine_id, endpoint_uri)


def _mqtt(machine_id: str, endpoint_uri: str) -> MachineDriver:
    from gateway.machines.mqtt import open_mqtt_driver

    return open_mqtt_driver(machine_id, endpoint_uri)


FACTORIES: dict[str, DriverFactory] = {"sas+tcp": _sas, "sas+serial": _sas, "mqtt": _mqtt}


def open_driver(machine_id: str, endpoint_uri: str) -> MachineDriver:
    """A driver for ``endpoint_uri`` (not yet opened: call ``await driver.open()``).

    Raises :class:`OperatorError` for an unknown scheme or a malformed URI, so a
    floor-plan mistake is one clear line naming the machine.
    """
    try:
        scheme = urlsplit(endpoint_uri.strip()).scheme.lower()
    except ValueError as exc:  # e.g. an unclosed IPv6 bracket
        raise OperatorError(f"machine {machine_id}: endpoint {endpoint_uri!r}: {exc}") from None
    factory = FACTORIES.get(scheme)
    if factory is None:
        known = ", ".join(f"{s}://" for s in sorted(FACTORIES))
        raise OperatorError(
            f"machine {machine_id}: endpoint {endpoint_uri!r} has an unknown scheme "
            f"(known: {known})"
        )
    try:
        return factory(machine_id, endpoint_uri)
    except ValueError as exc:
        raise OperatorError(f"machine {machine_id}: {exc}") from None


def check_endpoint(machine_id: str, endpoint: str) -> None:
    """Parse an endpoint with its driver (the driver made is never opened), so a bad one
    is refused in one line before it is stored."""
    open_driver(machine_id, endpoint)
