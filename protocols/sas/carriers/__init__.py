"""Async carriers for SAS: thin byte pipes under the sans-I/O core.

Every carrier moves the *escaped* SAS stream (``FF 00 b`` = byte ``b`` with the wakeup
bit, ``FF FF`` = literal ``FF``, see ``shared/reference/sas.md`` §1) in both directions,
so one decoder serves TCP, serial and memory alike.  Only the serial carrier has to
translate: MARK/SPACE parity for the wakeup bit on send, PARMRK marking on receive
(which the Linux tty layer already produces in the escaped form).
"""

from protocols.sas.carriers.base import Carrier, CarrierClosed
from protocols.sas.carriers.memory import MemoryCarrier, memory_pair
from protocols.sas.carriers.serial import SerialCarrier, open_serial, split_wakeup
from protocols.sas.carriers.tcp import TcpCarrier, connect_tcp, serve_tcp

__all__ = [
    "Carrier",
    "CarrierClosed",
    "MemoryCarrier",
    "SerialCarrier",
    "TcpCarrier",
    "connect_tcp",
    "memory_pair",
    "open_serial",
    "serve_tcp",
    "split_wakeup",
]
