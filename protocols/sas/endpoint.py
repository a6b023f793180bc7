"""SAS endpoint URIs: where a machine's SAS loop is and which address it answers.

``sas+tcp://HOST:PORT?address=N``   an interface board's (or emulator's) TCP port
``sas+serial:///dev/ttyX?address=N`` a local serial port

The address defaults to 1 (the usual address of a single EGM on its own loop).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from protocols.sas.carriers import Carrier, connect_tcp, open_serial

TCP_SCHEME = "sas+tcp"
SERIAL_SCHEME = "sas+serial"
SCHEMES = (TCP_SCHEME, SERIAL_SCHEME)


class EndpointError(ValueError):
    """A SAS endpoint URI that cannot be used; the message says which part is wrong."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    scheme: str
    address: int  # SAS address 1..127
    host: str = ""
    port: int = 0
    device: str = ""  # serial device path

    def __str__(self) -> str:
        if self.scheme == TCP_SCHEME:
            host = f"[{self.host}]" if ":" in self.host else self.host
            return f"{TCP_SCHEME}://{host}:{self.port}?address={self.address}"
        return f"{SERIAL_SCHEME}://{self.device}?address={self.address}"

    async def open_carrier(self, *, connect_seconds: float = 5.0) -> Carrier:
        if self.scheme == TCP_SCHEME:
            return await connect_tcp(self.host, self.port, connect_seconds=connect_seconds)
        return await open_serial(self.device)


def parse_endpoint(uri: str) -> Endpoint:
    """Parse and validate a SAS endpoint URI; raises :class:`EndpointError`."""
    parts = urlsplit(uri.strip())
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise EndpointError(
            f"endpoint {uri!r}: scheme must be {TCP_SCHEME}:// or {SERIAL_SCHEME}://"
        )
    if parts.fragment:
        raise EndpointError(f"endpoint {uri!r}: unexpected '#' fragment")
    address = _parse_address(uri, parts.query)
    if scheme == TCP_SCHEME:
        if parts.path not in ("", "/"):
            raise EndpointError(f"endpoint {uri!r}: a TCP endpoint has no path")
        try:
            host, port = parts.hostname, parts.port
        except ValueError as exc:  # port not a number or out of range
            raise EndpointError(f"endpoint {uri!r}: bad port ({exc})") from None
        if not host:
            raise EndpointError(f"endpoint {uri!r}: missing host")
        if port is None or port == 0:
            raise EndpointError(f"endpoint {uri!r}: missing port (1..65535)")
        return Endpoint(TCP_SCHEME, address, host=host, port=port)
    if parts.netloc:
        raise EndpointError(
            f"endpoint {uri!r}: serial endpoints look like sas+serial:///dev/ttyUSB0 "
            "(three slashes, no host)"
        )
    if not parts.path.startswith("/") or parts.path == "/":
        raise EndpointError(f"endpoint {uri!r}: missing serial device path")
    return Endpoint(SERIAL_SCHEME, address, device=parts.path)


def _parse_address(uri: str, query: str) -> int:
    try:
        params = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise EndpointError(f"endpoint {uri!r}: malformed query {query!r}") from None
    unknown = set(params) - {"address"}
    if unknown:
        raise EndpointError(f"endpoint {uri!r}: unknown parameter(s) {', '.join(sorted(unknown))}")
    values = params.get("address", ["1"])
    if len(values) != 1:
        raise EndpointError(f"endpoint {uri!r}: address given more than once")
    text = values[0]
    if not text.isdigit() or not 1 <= int(text) <= 127:
        raise EndpointError(f"endpoint {uri!r}: address must be 1..127, got {text!r}")
    return int(text)
