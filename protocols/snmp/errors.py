"""pysnmp reports failures as an ``errorIndication`` object or an ``errorStatus`` in the
response; here they become typed exceptions, split by what the caller should do, so a
``tenacity`` policy can retry exactly the transient ones (:data:`RETRYABLE`).
"""

from __future__ import annotations

from typing import Any


class SnmpError(Exception):
    """Base of every SNMP failure Reelgate raises."""


class SnmpTimeout(SnmpError):
    """No response in time (UDP loss, agent busy or down): retry."""


class SnmpTransportError(SnmpError):
    """The request could not be sent (socket error): retry."""


class SnmpAuthError(SnmpError):
    """USM refused us (unknown user, wrong keys, unsupported security level, bad
    community): a configuration problem, never fixed by retrying."""


class SnmpAgentError(SnmpError):
    """The agent answered with an error status (noSuchName, genErr, ...)."""

    def __init__(self, message: str, status: str) -> None:
        super().__init__(message)
        self.status = status


class SnmpNoSuchObject(SnmpAgentError):
    """The agent does not implement the object (wrong MIB or firmware)."""


class SnmpProtocolError(SnmpError):
    """A response we could not decode or match (garbage, engine-id or time-window
    mismatch during discovery): retry, as with a timeout."""


RETRYABLE: tuple[type[SnmpError], ...] = (SnmpTimeout, SnmpTransportError, SnmpProtocolError)

# pysnmp.proto.errind class names, by what they mean for us.
_TIMEOUT = frozenset({"RequestTimedOut"})
_AUTH = frozenset(
    {
        "UnknownUserName",
        "UnknownSecurityName",
        "WrongDigest",
        "DecryptionError",
        "EncryptionError",
        "UnsupportedSecurityLevel",
        "AuthenticationError",
        "AuthenticationFailure",
        "UnknownCommunityName",
        "NoAuthentication",
        "NoEncryption",
        "UnsupportedAuthProtocol",
        "UnsupportedPrivProtocol",
        "UnsupportedSecurityModel",
        "NoSuchView",
        "NoAccessEntry",
        "NoGroupName",
        "NotInView",
        "NoSuchContext",
    }
)
_PROTOCOL = frozenset(
    {
        "SerializationError",
        "DeserializationError",
        "ParseError",
        "InvalidMsg",
        "EmptyResponse",
        "DataMismatch",
        "EngineIDMismatch",
        "UnknownEngineID",
        "NotInTimeWindow",
        "TooBig",
        "OidNotIncreasing",
        "LoopTerminated",
    }
)
_TRANSPORT_HINTS = ("socket", "transport", "connection refused", "unreachable")


def raise_for(error_indication: Any, error_status: Any, error_index: Any, where: str) -> None:
    """Raise the typed exception for a pysnmp result; return quietly on success."""
    if error_indication:
        text = str(error_indication)
        name = type(error_indication).__name__
        if name in _TIMEOUT:
            raise SnmpTimeout(f"{where}: {text}")
        if name in _AUTH:
            raise SnmpAuthError(f"{where}: {text}")
        if name in _PROTOCOL:
            raise SnmpProtocolError(f"{where}: {text}")
        if any(h in text.lower() for h in _TRANSPORT_HINTS):
            raise SnmpTransportError(f"{where}: {text}")
        raise SnmpError(f"{where}: {text}")
    if error_status and int(error_status) != 0:
        status = (
            error_status.prettyPrint()
            if hasattr(error_status, "prettyPrint")
            else str(error_status)
        )
        message = f"{where}: agent error {status} at var-bind {int(error_index or 0)}"
        if status == "noSuchName":
            raise SnmpNoSuchObject(message, status)
        raise SnmpAgentError(message, status)
