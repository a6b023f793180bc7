"""SNMP for board health: REELGATE-MIB (module text + Python mirror), typed errors and
security settings, and the manager (poller and trap receiver, ``protocols/snmp/manager.py``;
import it directly, it loads pysnmp).  The agent lives in ``emulators/snmp_agent.py``; the
gateway's wiring (events, trap marks, floor machines) in ``gateway/machines/health.py``."""

from protocols.snmp.errors import (
    RETRYABLE,
    SnmpAgentError,
    SnmpAuthError,
    SnmpError,
    SnmpNoSuchObject,
    SnmpProtocolError,
    SnmpTimeout,
    SnmpTransportError,
)
from protocols.snmp.mib import BoardTrap, Notification, TournamentMode, mib_text, parse_trap

__all__ = [
    "RETRYABLE",
    "BoardTrap",
    "Notification",
    "SnmpAgentError",
    "SnmpAuthError",
    "SnmpError",
    "SnmpNoSuchObject",
    "SnmpProtocolError",
    "SnmpTimeout",
    "SnmpTransportError",
    "TournamentMode",
    "mib_text",
    "parse_trap",
]
