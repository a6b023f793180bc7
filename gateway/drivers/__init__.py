"""Machine drivers: one implementation of :class:`gateway.driver.MachineDriver` per
protocol, chosen by endpoint URI scheme in :mod:`gateway.drivers.registry`."""

from gateway.drivers.registry import FACTORIES, open_driver

__all__ = ["FACTORIES", "open_driver"]
