"""``reelgate sas probe ENDPOINT``: a technician's look at one machine over SAS.

First turns real-time event reporting off (LP 0E 00, as the gateway does when it takes a
machine over: SAS's default mode, so the general polls below are framed right; a machine
without LP 0E stays silent to it and the probe goes on).  Reads the machine ID and info
(LP 1F), SAS version and serial (54), enabled features
(A0: tournament supported or not), its AFT asset number and registration (73 FF, read
only), credits (1A), clock (7E) and pending exceptions
(general polls until the queue is empty -- reading them acknowledges them, as any SAS
host does).  Any failure is one line on stderr and a non-zero exit code.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from gateway.app.sas_capture import capture_options, check_capture, open_capture
from gateway.app.sas_conformance import conformance, format_report
from gateway.errors import OperatorError
from protocols.sas import describe_exception, describe_registration_status
from protocols.sas.capture import CaptureError, parse_capture
from protocols.sas.carriers.tap import CaptureFile
from protocols.sas.client import SERIAL_SETTINGS, TCP_SETTINGS, SasClient, SasClientError
from protocols.sas.denominations import describe_denomination
from protocols.sas.endpoint import SERIAL_SCHEME, EndpointError, parse_endpoint
from protocols.sas.messages import EgmMessage, GeneralPoll, HostMessage
from protocols.sas.replay import Entry, replay

ENDPOINT_HELP = "sas+tcp://HOST:PORT?address=N or sas+serial:///dev/ttyX"


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser("sas", help="talk SAS to one machine")
    actions = parser.add_subparsers(dest="sas_action", required=True, metavar="ACTION")
    probe = actions.add_parser(
        "probe",
        help="read ID, version, serial, denomination, features, credits, clock, exceptions",
        description="Example: reelgate sas probe 'sas+tcp://127.0.0.1:7001?address=1'",
    )
    probe.add_argument("endpoint", help=ENDPOINT_HELP)
    probe.add_argument("--json", action="store_true", help="print one JSON object")
    probe.add_argument(
        "--timeout", type=float, default=15.0, help="give up after this many seconds in all"
    )
    capture_options(probe, required=False)
    probe.set_defaults(handler=run_probe)

    capture = actions.add_parser(
        "capture",
        help="record every byte both ways while probing and watching one machine",
        description="Runs the probe's reads, then general polls and the credit meter for "
        "--seconds, recording every byte both ways (docs/sas.md, real machines). Example: "
        "reelgate sas capture 'sas+tcp://127.0.0.1:7001?address=1' --out egm7.sascap",
    )
    capture.add_argument("endpoint", help=ENDPOINT_HELP)
    capture_options(capture, required=True)
    capture.add_argument(
        "--seconds", type=float, default=10.0, help="watch this long after the probe (10)"
    )
    capture.add_argument("--json", action="store_true", help="print the summary as JSON")
    capture.set_defaults(handler=run_capture)

    conform = actions.add_parser(
        "conformance",
        help="run the safe polls a heat needs; per poll: answered, odd, silent, refused, "
        "garbled, with the bytes",
        description="Reads, LP 0E off, the AFT interrogations and LP 01 then 02; never a "
        "transfer, a handpay reset, tournament mode or the clock (docs/sas.md, real "
        "machines). Example: reelgate sas conformance 'sas+tcp://127.0.0.1:7001?address=1'",
    )
    conform.add_argument("endpoint", help=ENDPOINT_HELP)
    conform.add_argument(
        "--no-lock", action="store_true", help="leave out LP 01/02 (play is never disabled)"
    )
    conform.add_argument("--json", action="store_true", help="print one JSON object")
    conform.add_argument(
        "--timeout", type=float, default=60.0, help="give up after this many seconds in all"
    )
    capture_options(conform, required=False)
    conform.set_defaults(handler=run_conformance)

    replay = actions.add_parser(
        "replay",
        help="run a capture through Reelgate's decoders and link: what each message was, "
        "what was odd, what Reelgate would have done",
        description="Example: reelgate sas replay egm7.sascap (docs/sas.md, real machines)",
    )
    replay.add_argument("file", help="a capture file (JSON lines, docs/sas.md)")
    replay.add_argument(
        "--timing",
        choices=("auto", "tcp", "serial"),
        default="auto",
        help="the link's timeouts: serial (SAS's 20 ms) or tcp (a board's wider ones); "
        "auto: from the capture's endpoint",
    )
    replay.add_argument("--odd-only", action="store_true", help="print only what was odd")
    replay.add_argument("--json", action="store_true", help="print one JSON object")
    replay.set_defaults(handler=run_replay)


def _endpoint(text: str) -> str:
    try:
        return str(parse_endpoint(text))
    except EndpointError as exc:
        raise OperatorError(str(exc)) from None


def run_probe(args: argparse.Namespace) -> int:
    endpoint = _endpoint(args.endpoint)
    if args.timeout <= 0:
        raise OperatorError("--timeout must be positive")
    check_capture(args)
    result = asyncio.run(_probe_or_fail(endpoint, args.timeout, args))
    print(json.dumps(result) if args.json else format_probe(result))
    return 0


def run_conformance(args: argparse.Namespace) -> int:
    endpoint = _endpoint(args.endpoint)
    if args.timeout <= 0:
        raise OperatorError("--timeout must be positive")
    check_capture(args)
    report = asyncio.run(_conformance_or_fail(endpoint, args))
    print(json.dumps(report) if args.json else format_report(report))
    return 0


async def _conformance_or_fail(endpoint: str, args: argparse.Namespace) -> dict[str, Any]:
    capture = open_capture(args, endpoint)
    try:
        async with asyncio.timeout(args.timeout):
            return await conformance(endpoint, lock=not args.no_lock, capture=capture)
    except TimeoutError:
        raise OperatorError(f"{endpoint}: no complete report within {args.timeout:g} s") from None
    except SasClientError as exc:
        raise OperatorError(f"{endpoint}: {exc}") from None
    except OSError as exc:
        raise OperatorError(f"{endpoint}: cannot connect ({exc.strerror or exc})") from None
    finally:
        if capture is not None:
            capture.close()


def run_replay(args: argparse.Namespace) -> int:
    try:
        with open(args.file, encoding="utf-8") as f:
            header, records = parse_capture(f)
    except OSError as exc:
        raise OperatorError(f"{args.file}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise OperatorError(f"{args.file}: not a capture (not UTF-8 text)") from None
    except CaptureError as exc:
        raise OperatorError(f"{args.file}: {exc}") from None
    timing = args.timing
    if timing == "auto":
        timing = "serial" if header.endpoint.startswith(f"{SERIAL_SCHEME}:") else "tcp"
    report = replay(records, SERIAL_SETTINGS if timing == "serial" else TCP_SETTINGS)
    entries = [e for e in report.entries if e.odd or not args.odd_only]
    if args.json:
        print(
            json.dumps(
                {
                    "file": args.file,
                    "endpoint": header.endpoint,
                    "started": header.started,
                    "timing": timing,
                    "summary": report.summary(),
                    "entries": [e.as_dict() for e in entries],
                }
            )
        )
    else:
        print(f"capture {args.file}: {header.endpoint or '(no endpoint)'}, {header.started}")
        print(f"timing  {timing}")
        for e in entries:
            print(format_entry(e))
        counts = report.summary()
        print("summary " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items()))
    return 0


def format_entry(e: Entry) -> str:
    """One report entry: time, direction, bytes, then its notes indented."""
    lines = [f"{e.t:10.6f} {e.direction:<5} {e.data.hex(' ') or '-'}"]
    lines += [f"{'':17}= {w}" for w in e.what]
    lines += [f"{'':17}! {o}" for o in e.odd]
    lines += [f"{'':17}> {a}" for a in e.action]
    return "\n".join(lines)


def run_capture(args: argparse.Namespace) -> int:
    endpoint = _endpoint(args.endpoint)
    if not 0 <= args.seconds <= 86_400:
        raise OperatorError("--seconds must be 0..86400")
    check_capture(args)
    result = asyncio.run(_capture_or_fail(endpoint, args))
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"captured {result['records']} records to {result['file']}"
            f" ({result['rotations']} rotations); polls {result['polls']},"
            f" quirks {len(result['quirks'])}"
        )
    return 0


async def _probe_or_fail(endpoint: str, seconds: float, args: argparse.Namespace) -> dict[str, Any]:
    capture = open_capture(args, endpoint)
    try:
        async with asyncio.timeout(seconds):
            return await probe(endpoint, capture=capture)
    except TimeoutError:
        raise OperatorError(f"{endpoint}: no complete answer within {seconds:g} s") from None
    except SasClientError as exc:
        raise OperatorError(f"{endpoint}: {exc}") from None
    except OSError as exc:
        raise OperatorError(f"{endpoint}: cannot connect ({exc.strerror or exc})") from None
    finally:
        if capture is not None:
            capture.close()


async def _capture_or_fail(endpoint: str, args: argparse.Namespace) -> dict[str, Any]:
    capture = open_capture(args, endpoint)
    assert capture is not None
    polls = 0
    try:
        async with asyncio.timeout(30.0 + 2 * args.seconds):
            client = await SasClient.connect(endpoint, capture=capture)
            try:
                result, replies = await _read(client, endpoint)
                loop = asyncio.get_running_loop()
                until = loop.time() + args.seconds
                while loop.time() < until:  # the watch: what a heat's watcher polls
                    await client.events()
                    await client.credits()
                polls = client.stats.polls
                result["quirks"] = quirks_of(client, replies)
            finally:
                await client.close()
    except TimeoutError:
        raise OperatorError(f"{endpoint}: the capture did not finish in time") from None
    except SasClientError as exc:
        raise OperatorError(f"{endpoint}: {exc} (bytes so far in {args.capture})") from None
    except OSError as exc:
        raise OperatorError(f"{endpoint}: cannot connect ({exc.strerror or exc})") from None
    finally:
        capture.close()
    return {
        "endpoint": endpoint,
        "file": args.capture,
        "records": capture.records,
        "rotations": capture.rotations,
        "polls": polls,
        "quirks": result["quirks"],
    }


async def probe(endpoint: str, *, capture: CaptureFile | None = None) -> dict[str, Any]:
    """Everything the probe reads, as plain data."""
    client = await SasClient.connect(endpoint, capture=capture)
    try:
        return (await _read(client, endpoint))[0]
    finally:
        await client.close()


async def _read(client: SasClient, endpoint: str) -> tuple[dict[str, Any], list[EgmMessage]]:
    """The probe's reads on an open client: the result, and the replies whose display
    fields may carry quirks."""
    real_time_off = await client.end_real_time_reporting()
    info = await client.machine_info()
    version = await client.version()
    caps = await client.capabilities()
    credits = await client.credits()
    clock = await client.read_clock()
    # LP 73 FF only reads: the probe never registers (that is preflight's job).
    registration = await client.aft_registration() if caps.aft else None
    codes = await client.events()
    v = version.version
    result = {
        "endpoint": endpoint,
        "address": client.address,
        "game_id": info.game_id,
        "additional_id": info.additional_id,
        "paytable_id": info.paytable_id,
        "base_percent": info.base_percent,
        "max_bet": info.max_bet,
        "denomination_code": info.denomination,
        "denomination": describe_denomination(info.denomination),
        "sas_version": f"{v[0]}.{v[1:]}" if len(v) == 3 and v.isdigit() else v,
        "serial_number": version.serial,
        "tournament_supported": caps.tournament,
        "aft_supported": caps.aft,
        "aft_asset_number": None if registration is None else registration.asset_number,
        "aft_registration": None
        if registration is None
        else describe_registration_status(registration.registration_status),
        "aft_pos_id": None
        if registration is None or not registration.pos_id
        else registration.pos_id,
        "features": caps.features.hex(" "),
        "credits": credits,
        "clock": clock.isoformat(sep=" "),
        "exceptions": [{"code": f"{c:02X}", "name": describe_exception(c)} for c in codes],
        "real_time_reporting": "turned off" if real_time_off else "no LP 0E (silent)",
        "quirks": quirks_of(client, [info, version]),
    }
    return result, [info, version]


def quirks_of(client: SasClient, replies: list[EgmMessage]) -> list[dict[str, str]]:
    """What the machine did that SAS does not say, and the gateway tolerates: display
    fields kept as received, bytes after a reply (docs/sas.md, real machines)."""
    out: list[dict[str, str]] = []
    for reply in replies:
        for q in getattr(reply, "quirks", ()):
            out.append(
                {
                    "poll": f"{reply.encode()[1]:02X}",
                    "what": f"{q.field} {q.why} (kept as received)",
                    "bytes": q.raw.hex(" "),
                }
            )
    seen: set[tuple[str, bytes]] = set()
    for t in client.trailing:  # each distinct run once (a quirk repeats on every poll)
        key = (poll_name(t.poll), t.data)
        if key in seen:
            continue
        seen.add(key)
        out.append(
            {
                "poll": key[0],
                "what": f"{len(t.data)} byte(s) after the reply (flagged, ignored)",
                "bytes": t.data.hex(" "),
            }
        )
    return out


def poll_name(poll: HostMessage) -> str:
    return "general poll" if isinstance(poll, GeneralPoll) else f"{poll.encode()[1]:02X}"


def _aft_line(r: dict[str, Any]) -> str:
    if not r["aft_supported"]:
        return "not supported"
    pos = f", POS ID {r['aft_pos_id']}" if r["aft_pos_id"] else ""
    return f"supported; asset number {r['aft_asset_number']}, {r['aft_registration']}{pos}"


def format_probe(r: dict[str, Any]) -> str:
    pct = r["base_percent"]
    base = f"{pct[:2]}.{pct[2:]} %" if len(pct) == 4 and pct.isdigit() else pct
    tournament = (
        "supported (LP A0 bit 3): native tournament mode"
        if r["tournament_supported"]
        else "not supported (LP A0 bit 3 clear): heats run host-timed"
    )
    exceptions = ", ".join(f"{e['code']} {e['name']}" for e in r["exceptions"]) or "none"
    quirks = [f"LP {q['poll']}: {q['what']}: {q['bytes']}" for q in r["quirks"]]
    rows = [
        ("endpoint", r["endpoint"]),
        ("machine ID", f"game {r['game_id']}, additional {r['additional_id']}"),
        ("paytable", f"{r['paytable_id']}, base {base}, max bet {r['max_bet']}"),
        ("SAS version", r["sas_version"]),
        ("serial", r["serial_number"] or "(none)"),
        ("denomination", f"{r['denomination']} (code {r['denomination_code']:02X})"),
        ("tournament", tournament),
        ("AFT", _aft_line(r)),
        ("credits", str(r["credits"])),
        ("clock", r["clock"]),
        ("exceptions", exceptions),
        ("real-time", r["real_time_reporting"]),
    ]
    rows += [("quirk", q) for q in quirks] or [("quirks", "none")]
    return "\n".join(f"{k:<13} {v}" for k, v in rows)
