"""``reelgate sas conformance URL``: how one EGM answers the polls a heat needs.

Only safe polls (docs/sas.md, *Real machines*): reads, the real-time reporting switch
set to SAS's default (LP 0E off), the AFT *interrogations* (LP 73 FF, 74 FF, 72 FF) and,
unless ``--no-lock``, LP 01 then LP 02 (play locked for one poll spacing, then enabled
again: a heat starts and ends with them).  Never a transfer of credit, never a handpay
reset, never tournament mode, never the clock set.  Each poll is judged:

* ``answered``  the reply SAS says, first try;
* ``odd``       answered, but with something SAS does not say (a display field kept as
                received, bytes after the reply, a reply that took repeats, busy);
* ``silent``    no reply on any try (an EGM stays silent to a poll it does not support);
* ``refused``   NACK or busy on every try;
* ``garbled``   a reply on every try, none of them usable (bad CRC, length, BCD...).

Each row carries the bytes both ways, so a venue can keep the report per EGM model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocols.sas.aft import AftInterrogate, AftLockRequest
from protocols.sas.aft_registration import AftRegister
from protocols.sas.capture import EGM, HOST
from protocols.sas.carriers.tap import CaptureMemory, CaptureSink
from protocols.sas.client import (
    SasBusy,
    SasClient,
    SasProtocolFault,
    SasRefused,
    SasTimeout,
)
from protocols.sas.codec import REPLIES
from protocols.sas.messages import (
    AFT_SUPPORTED_BIT,
    TOURNAMENT_SUPPORTED_BIT,
    Ack,
    EgmMessage,
    EnabledFeaturesReply,
    ExceptionReply,
    GeneralPoll,
    HostMessage,
    LongPoll,
    SendCurrentCredits,
    SendDateTime,
    SendEnabledFeatures,
    SendGamingMachineMeters,
    SendMachineInfo,
    SendMeters,
    SendTournamentMeters,
    SendVersion,
    Shutdown,
    Startup,
)
from protocols.sas.real_time import RealTimeEvent, RealTimeReporting
from protocols.sas.replay import describe

STATUSES = ("answered", "odd", "silent", "refused", "garbled")


@dataclass(frozen=True, slots=True)
class Check:
    label: str  # "1F", "general poll"
    name: str
    make: Callable[[int], HostMessage]
    needs: str = ""  # "tournament" / "aft": silence is expected without the feature
    lock: bool = False  # LP 01 / 02: skipped with --no-lock


CHECKS: tuple[Check, ...] = (
    Check("general poll", "exception queue", GeneralPoll),
    Check("0E", "real-time reporting off", lambda a: RealTimeReporting(a, False)),
    Check("1F", "machine ID and info", SendMachineInfo),
    Check("54", "SAS version and serial", SendVersion),
    Check("A0", "enabled features", lambda a: SendEnabledFeatures(a, 0)),
    Check("1A", "current credits", SendCurrentCredits),
    Check("0F", "meters 10-15", SendMeters),
    Check("1C", "gaming machine meters", SendGamingMachineMeters),
    Check("7E", "date and time", SendDateTime),
    Check("99", "tournament meters", lambda a: SendTournamentMeters(a, 0), "tournament"),
    Check("73", "AFT registration (read)", AftRegister.read, "aft"),
    Check("74", "AFT lock status (interrogate)", AftLockRequest, "aft"),
    Check("72", "AFT last transfer (interrogate)", lambda a: AftInterrogate(a, 0), "aft"),
    Check("01", "disable play (lock)", Shutdown, lock=True),
    Check("02", "enable play (unlock)", Startup, lock=True),
)


@dataclass(slots=True)
class Row:
    poll: str
    name: str
    status: str
    reply: str
    odd: list[str] = field(default_factory=list)
    host: list[str] = field(default_factory=list)  # hex runs the host sent
    egm: list[str] = field(default_factory=list)  # hex runs the EGM sent

    def as_dict(self) -> dict[str, Any]:
        return {
            "poll": self.poll,
            "name": self.name,
            "status": self.status,
            "reply": self.reply,
            "odd": self.odd,
            "host": self.host,
            "egm": self.egm,
        }


async def conformance(
    endpoint: str, *, lock: bool = True, capture: CaptureSink | None = None
) -> dict[str, Any]:
    """Run :data:`CHECKS` against ``endpoint``; the report as plain data."""
    loop = asyncio.get_running_loop()
    memory = CaptureMemory(loop.time)
    sink: CaptureSink = memory if capture is None else _Both(memory, capture)
    client = await SasClient.connect(endpoint, capture=sink)
    rows: list[Row] = []
    features: bytes | None = None
    try:
        for check in CHECKS:
            if check.lock and not lock:
                continue
            row, reply = await _run(client, memory, check, features)
            rows.append(row)
            if isinstance(reply, EnabledFeaturesReply):
                features = reply.features
    finally:
        await client.close()
    counts = {s: sum(r.status == s for r in rows) for s in STATUSES}
    return {
        "endpoint": endpoint,
        "address": client.address,
        "lock_polls": lock,
        "summary": counts,
        "polls": [r.as_dict() for r in rows],
    }


async def _run(
    client: SasClient, memory: CaptureMemory, check: Check, features: bytes | None
) -> tuple[Row, EgmMessage | None]:
    """One check: its row, and the reply if there was one."""
    poll = check.make(client.address)
    first = len(memory.records)
    retries, trailing = client.stats.retries, len(client.trailing)
    real_time = check.label == "0E"
    if real_time:  # framed as in real-time mode, which also takes a plain ACK
        client.line.real_time.add(client.address)
    status, text, odd = "answered", "", []
    reply: EgmMessage | None = None
    try:
        reply = await client.request(poll)
        text = describe(reply)
        odd = _odd_reply(poll, reply)
    except SasTimeout as exc:
        status, text = "silent", str(exc)
        if check.needs and features is not None and not _has(features, check.needs):
            odd.append(f"expected: LP A0 says no {check.needs} support")
    except SasBusy as exc:
        status, text = "refused", f"busy: {exc}"
    except SasRefused as exc:
        status, text = "refused", str(exc)
    except SasProtocolFault as exc:
        status, text = "garbled", str(exc)
    finally:
        if real_time:
            client.line.real_time.discard(client.address)
    if client.stats.retries > retries:
        n = client.stats.retries - retries
        odd.append(f"answered after {n} repeat(s)" if reply is not None else f"{n} repeat(s)")
    for t in list(client.trailing)[trailing:]:
        odd.append(f"{len(t.data)} byte(s) after the reply: {t.data.hex(' ')}")
    if status == "answered" and odd:
        status = "odd"
    records = memory.records[first:]
    row = Row(
        check.label,
        check.name,
        status,
        text,
        odd,
        [r.data.hex(" ") for r in records if r.direction == HOST],
        [r.data.hex(" ") for r in records if r.direction == EGM],
    )
    return row, reply


def _odd_reply(poll: HostMessage, reply: EgmMessage) -> list[str]:
    odd = [q.describe() + " (kept as received)" for q in getattr(reply, "quirks", ())]
    if isinstance(poll, GeneralPoll):
        if not isinstance(reply, ExceptionReply | RealTimeEvent):
            odd.append(f"a general poll answered {type(reply).__name__}")
        return odd
    assert isinstance(poll, LongPoll)
    want = REPLIES.get(poll.command(), Ack)
    if not isinstance(reply, want):
        odd.append(f"expected {want.__name__}, got {type(reply).__name__}")
    return odd


def _has(features: bytes, needs: str) -> bool:
    if needs == "tournament":
        return bool(features[:1] and features[0] & TOURNAMENT_SUPPORTED_BIT)
    return bool(len(features) > 1 and features[1] & AFT_SUPPORTED_BIT)


class _Both:
    def __init__(self, *sinks: CaptureSink) -> None:
        self.sinks = sinks

    def record(self, direction: str, wire: bytes) -> None:
        for sink in self.sinks:
            sink.record(direction, wire)


def format_report(report: dict[str, Any]) -> str:
    """The report as a table: one row per poll, its bytes and oddities beneath."""
    lines = [
        f"endpoint {report['endpoint']}",
        f"{'poll':<13} {'name':<32} {'status':<9} reply",
    ]
    for r in report["polls"]:
        lines.append(f"{r['poll']:<13} {r['name']:<32} {r['status']:<9} {r['reply']}")
        lines += [f"{'':14}! {o}" for o in r["odd"]]
        lines += [f"{'':14}host {h}" for h in r["host"]]
        lines += [f"{'':14}egm  {e}" for e in r["egm"]]
    counts = report["summary"]
    lines.append("summary " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return "\n".join(lines)
