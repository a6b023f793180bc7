"""RFC 5424 syslog messages and RFC 6587 octet-counting frames (sans-I/O).

The standard library's ``SysLogHandler`` writes the older BSD format (RFC 3164) and
frames TCP by a trailing newline; a collector expecting RFC 5424 (rsyslog's
``imtcp``/``imudp`` with the RFC 5424 parser, syslog-ng's ``syslog()`` source) wants
``<PRI>1 TIMESTAMP HOST APP PROCID MSGID SD MSG``, and over TCP each message prefixed
by its length in octets.  The transports are :mod:`gateway.records.witness_sinks`.
"""

from __future__ import annotations

from datetime import UTC, datetime

FACILITY_AUDIT = 13  # "log audit" (RFC 5424 table 1)
SEVERITY_NOTICE = 5
_MAX_FRAME = 64 * 1024  # a witness entry is ~150 octets; a longer length is garbage


def _field(value: str, limit: int) -> str:
    """A header field: printable US-ASCII without spaces, or the NILVALUE ``-``."""
    cleaned = "".join(c for c in value if "!" <= c <= "~")[:limit]
    return cleaned or "-"


def format_message(
    msg: str,
    *,
    at: datetime,
    hostname: str,
    app_name: str = "reelgate",
    procid: str = "-",
    msgid: str = "witness",
    facility: int = FACILITY_AUDIT,
    severity: int = SEVERITY_NOTICE,
) -> bytes:
    """One RFC 5424 message (no structured data); ``msg`` is sent as MSG-ANY."""
    if not 0 <= facility <= 23 or not 0 <= severity <= 7:
        raise ValueError("syslog facility 0..23 and severity 0..7")
    stamp = at.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    header = (
        f"<{facility * 8 + severity}>1 {stamp} {_field(hostname, 255)} "
        f"{_field(app_name, 48)} {_field(procid, 128)} {_field(msgid, 32)} -"
    )
    return f"{header} {msg}".encode()


def frame(message: bytes) -> bytes:
    """RFC 6587 octet counting: ``LEN SP MESSAGE``."""
    return b"%d " % len(message) + message


def unframe(buffer: bytes) -> tuple[list[bytes], bytes]:
    """The whole messages at the start of ``buffer`` and what is left (a partial frame).
    Raises ValueError on a frame that is not octet-counted."""
    messages: list[bytes] = []
    while buffer:
        space = buffer.find(b" ", 0, 8)
        if space < 0:
            if len(buffer) >= 8 or not buffer.isdigit():
                raise ValueError("syslog frame: no octet count")
            break
        count = buffer[:space]
        if not count.isdigit() or int(count) > _MAX_FRAME:
            raise ValueError("syslog frame: bad octet count")
        end = space + 1 + int(count)
        if len(buffer) < end:
            break
        messages.append(buffer[space + 1 : end])
        buffer = buffer[end:]
    return messages, buffer


def message_text(message: bytes) -> str:
    """MSG of an RFC 5424 message (after the seven header fields); the whole text for
    anything else, so a collector keeps what it was sent."""
    text = message.decode("utf-8", errors="replace").removeprefix("\ufeff")
    parts = text.split(" ", 7)
    if len(parts) == 8 and parts[0].startswith("<") and parts[0].endswith(">1"):
        return parts[7].removeprefix("\ufeff")
    return text
