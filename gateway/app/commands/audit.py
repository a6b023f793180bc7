"""``reelgate audit verify|show|keys-init``: check and read the keyed audit log.

``verify`` needs the audit key (it recomputes every MAC) and checks the checkpoints'
signatures with the public key (``--public-key``, else the ``.pub`` beside the signing
key); it prints one line per row that differs, was deleted or was inserted, naming the
table and id, and exits 1 if there is any.  It also reads the chain's witness (the
configured file, or ``--witness FILE``: a syslog collector's copy) and reports a
truncated or rolled-back tail as such, with the positions missing
(:mod:`gateway.records.witness_check`).  ``show`` only reads: it needs no key.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
from pathlib import Path
from typing import Any

from sqlalchemy import select

from gateway.app.database import close_engine, guarded, open_engine, resolve, safe_url
from gateway.app.options import OneLineParser, add_database, add_json
from gateway.errors import OperatorError
from gateway.records import chain, witness, witness_check
from gateway.records.keys import AUDIT_KEY_ENV, SIGNING_KEY_ENV, KeyPaths, RecordKeyError
from gateway.records.verify import verify as records_verify
from storage import audit
from storage.db import make_sessionmaker


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "audit", help="verify or read the audit log of every change people made"
    )
    actions = parser.add_subparsers(
        dest="audit_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )

    verify = actions.add_parser(
        "verify", help="recompute the keyed chain and every sealed result; exit 1 if broken"
    )
    _common(verify)
    verify.add_argument(
        "--public-key", help="the venue's Ed25519 public key (PEM) the checkpoints are signed by"
    )
    verify.add_argument(
        "--witness",
        help="the witness to check against (default: records.witness when it is a file; "
        "for syslog, the collector's copy)",
    )
    verify.set_defaults(handler=_verify)

    init = actions.add_parser("keys-init", help="write a new audit key and signing key pair")
    add_database(init)
    init.add_argument("--dir", help="folder for the keys (default: <sqlite file>.keys)")
    init.set_defaults(handler=_keys_init)

    receive = actions.add_parser(
        "witness-receive",
        help="keep the chain heads another gateway sends by syslog (RFC 5424, TCP and UDP)",
    )
    receive.add_argument("--listen", required=True, help="HOST:PORT to listen on (TCP and UDP)")
    receive.add_argument("--file", required=True, help="the file to append the entries to")
    receive.set_defaults(handler=_receive)

    show = actions.add_parser("show", help="list the latest audit rows, newest last")
    _common(show)
    show.add_argument("--subject", help="only rows about this subject (exact)")
    show.add_argument("--limit", type=int, default=50, help="at most this many rows (50)")
    show.set_defaults(handler=_show)


def _common(parser: argparse.ArgumentParser) -> None:
    add_database(parser)
    add_json(parser)


def _verify(args: argparse.Namespace) -> int:
    url, result, signed, seen = asyncio.run(
        _run_verify(args.database, args.public_key, args.witness)
    )
    findings = [*seen.findings, *result.findings]
    ok = result.ok and not seen.findings
    if args.json:
        print(
            json.dumps(
                {
                    "database": safe_url(url),
                    "signatures_checked": signed,
                    **result.as_dict(),
                    "ok": ok,
                    "findings": [f.as_dict() for f in findings],
                    "witness": seen.as_dict(),
                }
            )
        )
        return 0 if ok else 1
    keyed = f", keyed from row {result.keyed_from}" if result.keyed_from else ""
    points = f"{result.checkpoints} checkpoint(s)"
    points += " signed" if signed else " (signatures NOT checked: no public key)"
    witnessed = f", witnessed to row {seen.last_witnessed}" if seen.entries else ""
    # Documented changes after a sealed cut: counted, then listed one a line.
    amended = f", {len(result.amendments)} amendment(s)" if result.amendments else ""
    if ok:
        print(
            f"audit log intact{amended}: {result.rows_checked} rows{keyed}, {points}, "
            f"{result.sealed_rows} result rows sealed{witnessed}; last MAC {result.last_hash}"
        )
    elif seen.headline is not None:
        print(seen.headline)
    else:
        print(f"audit log BROKEN: {len(findings)} finding(s){keyed}, {points}{amended}")
    for item in result.amendments:
        print(f"  amendment {_amendment_line(item)}")
    for line in seen.restores:
        print(f"  {line}")
    for line in seen.warnings:
        print(f"  {line}")
    for finding in [] if ok else findings:
        print(f"  {finding.line()}")
    return 0 if ok else 1


def _amendment_line(item: dict[str, Any]) -> str:
    """One amendment of a sealed cut, as ``audit verify`` lists it."""
    change = ", ".join(f"{k} {v}" for k, v in sorted((item.get("change") or {}).items()))
    approved = f", approved by {item['approved_by']}" if item.get("approved_by") else ""
    sealed = item.get("checkpoint")
    return (
        f"(audit row {item['audit_row']}, checkpoint {sealed or 'none'}): tournament "
        f"{item['tournament']} {item['stage']} {item['kind']} (rule {item['rule']}; {change}) "
        f"by {item['requested_by']}{approved} — {item['reason']}"
    )


async def _run_verify(
    given: str | None, public_key: str | None, witness_file: str | None
) -> tuple[str, audit.VerifyResult, bool, witness_check.WitnessReport]:
    url, engine = await open_engine(given)
    try:
        paths = chain.key_paths(url)
        keys = audit.keys_of_engine(engine)
        if keys is None or paths is None:
            raise OperatorError(
                f"audit verify needs the audit key: set {AUDIT_KEY_ENV} to the venue's key file"
            )
        checker = _checker(Path(public_key) if public_key else paths.public_key, public_key)
        text, source = _witness_text(url, witness_file)
        async with make_sessionmaker(engine)() as session:
            result = await guarded(url, records_verify(session, check_signature=checker))
            seen = await guarded(url, witness_check.check(session, keys, text, source))
            return url, result, checker is not None, seen
    finally:
        await close_engine(engine)


def _witness_text(url: str, given: str | None) -> tuple[str | None, str]:
    """The witness to read: ``--witness FILE``, else the configured file."""
    if given is not None:
        path = Path(given)
        if not path.is_file():
            raise OperatorError(f"--witness {path}: no such file")
        return witness_check.read_witness(path)
    try:
        spec = witness.spec_for(url)
    except ValueError as exc:
        raise OperatorError(f"records.witness: {exc}") from None
    if spec.kind == "none":
        return None, "none configured (records.witness = none)"
    if spec.kind != "file" or spec.path is None:
        return None, f"{spec.describe()} is not read here: give the collector's copy (--witness)"
    return witness_check.read_witness(spec.path)


def _checker(path: Path, given: str | None) -> chain.SignatureChecker | None:
    if given is None and not path.exists():
        return None
    try:
        return chain.SignatureChecker(path)
    except RecordKeyError as exc:
        raise OperatorError(f"--public-key {exc}") from None


def _keys_init(args: argparse.Namespace) -> int:
    if args.dir:
        folder = Path(args.dir)
    else:
        found = chain.sqlite_key_dir(resolve(args.database, create=True))
        if found is None:
            raise OperatorError("--dir: say where to keep the keys (the database is not a file)")
        folder = found
    paths = KeyPaths.in_directory(folder)
    try:
        chain.create_keys(paths)
        keys = chain.load(paths)
    except RecordKeyError as exc:
        raise OperatorError(str(exc)) from None
    print(f"audit key   {paths.audit_key}  (keep it off the database server; back it up)")
    print(f"signing key {paths.signing_key}")
    print(f"public key  {paths.public_key}  fingerprint {keys.fingerprint}")
    print(f"export {AUDIT_KEY_ENV}={paths.audit_key} {SIGNING_KEY_ENV}={paths.signing_key}")
    return 0


def _receive(args: argparse.Namespace) -> int:
    from gateway.app.settings import host_port
    from gateway.records.witness_receiver import WitnessReceiver
    from gateway.records.witness_sinks import FileSink

    try:
        host, port = host_port(args.listen)
    except ValueError as exc:
        raise OperatorError(f"--listen {args.listen}: {exc}") from None
    path = Path(args.file)
    if not path.resolve().parent.is_dir():
        raise OperatorError(f"--file {path}: folder {path.resolve().parent} does not exist")

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        receiver = WitnessReceiver(FileSink(path))
        try:
            bound = await receiver.start(host, port)
        except OSError as exc:
            raise OperatorError(f"--listen {args.listen}: cannot listen ({exc.strerror})") from None
        print(f"witness receiver on {host}:{bound} (tcp, udp) -> {path}", flush=True)
        try:
            await stop.wait()
        finally:
            await receiver.close()

    asyncio.run(run())
    return 0


def _show(args: argparse.Namespace) -> int:
    if args.limit < 1 or args.limit > 10_000:
        raise OperatorError("--limit must be between 1 and 10000")
    rows = asyncio.run(_run_show(args.database, args.subject, args.limit))
    if args.json:
        print(json.dumps(rows))
        return 0
    for row in rows:
        reason = f" — {row['reason']}" if row["reason"] else ""
        print(f"{row['id']:>6} {row['at']} {row['actor']} {row['action']} {row['subject']}{reason}")
        if row["details"]:
            print(f"       {json.dumps(row['details'], ensure_ascii=False)}")
    return 0


async def _run_show(given: str | None, subject: str | None, limit: int) -> list[dict[str, Any]]:
    url, engine = await open_engine(given)
    try:
        async with make_sessionmaker(engine)() as session:
            query = select(audit.AuditEntry).order_by(audit.AuditEntry.id.desc()).limit(limit)
            if subject is not None:
                query = query.where(audit.AuditEntry.subject == subject)
            entries = (await guarded(url, session.execute(query))).scalars().all()
    finally:
        await engine.dispose()
    return [
        {
            "id": e.id,
            "at": e.at.isoformat(),
            "actor": e.actor,
            "action": e.action,
            "subject": e.subject,
            "reason": e.reason,
            "details": e.details_dict(),
            "hash": e.hash,
        }
        for e in reversed(entries)
    ]
