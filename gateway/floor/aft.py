"""The floor's AFT host identity handed to a machine's driver.

A driver that moves funds by AFT (:class:`~gateway.machines.capabilities.AftRegistrar`)
is told the registration key and POS ID the floor gives its machine before its first
call; other drivers (MQTT boards, native-only machines) are left alone.  A machine
without them still runs native heats; a host-timed one is then a preflight blocker.
"""

from __future__ import annotations

from gateway.floor.model import MachineSpec
from gateway.machines.capabilities import AftRegistrar
from gateway.machines.driver import MachineDriver


def configure_driver(driver: MachineDriver, spec: MachineSpec | None) -> MachineDriver:
    """``driver``, told ``spec``'s AFT key and POS ID if it registers as an AFT host."""
    if (
        spec is not None
        and spec.aft_registration_key is not None
        and spec.aft_pos_id is not None
        and isinstance(driver, AftRegistrar)
    ):
        driver.use_aft_host(spec.aft_registration_key, spec.aft_pos_id)
    return driver
