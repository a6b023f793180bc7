"""SNMP for board health: REELGATE-MIB (module text + Python mirror), typed errors and
security settings.  The agent lives in ``emulators/snmp_agent.py``, the poller and trap
receiver in ``gateway/health.py``."""

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
