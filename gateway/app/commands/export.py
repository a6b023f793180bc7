"""``reelgate export KIND ID`` and ``reelgate export verify FILE``: signed records.

KIND is heat, stage (ID ``TOURNAMENT:STAGE``), tournament, super9-session or cashup (ID
a date).  Writes ``KIND-ID.json`` (canonical JSON), ``KIND-ID.json.sig`` (detached
Ed25519 signature) and ``KIND-ID.html`` (printable report) into ``--out`` (default the
current folder), signed with the venue key from ``--signing-key``, else
``$REELGATE_SIGNING_KEY_FILE``, else the database's key folder — the key that signs its
checkpoints, found as every other signer finds it
(:func:`gateway.records.chain.key_paths`).  ``verify`` needs only the file, its ``.sig``
and the venue's public key: exit 0 valid, 1 (one line) altered or not signed by that key.
The format is docs/records.md, "Exports".
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.app.database import run
from gateway.app.options import OneLineParser, add_database
from gateway.errors import OperatorError
from gateway.records.keys import SIGNING_KEY_ENV, RecordKeyError, load_public_key, load_signing_key

KINDS = {
    "heat": "a heat: seats, players, machines, scores and meters, decisions",
    "stage": "a stage (ID TOURNAMENT:STAGE): standings, cuts, card and seat draws, prizes",
    "tournament": "a tournament: every stage, entries sold/refunded/comped, prizes",
    "super9-session": "a Super 9 session: tickets, spins and voids, claims, prizes, jackpot",
    "cashup": "a day's cash-up (ID YYYY-MM-DD), reconciled",
}


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "export", help="signed exports (JSON + HTML) of heats, stages, tournaments, Super 9"
    )
    kinds = parser.add_subparsers(
        dest="export_kind", required=True, metavar="KIND", parser_class=OneLineParser
    )
    for kind, help_text in KINDS.items():
        p = kinds.add_parser(kind, help=help_text)
        add_database(p)
        p.add_argument("id", metavar="ID")
        p.add_argument("--out", metavar="DIR", default=".", help="folder to write into (.)")
        p.add_argument(
            "--signing-key",
            metavar="FILE",
            help=f"venue Ed25519 key (default ${SIGNING_KEY_ENV}, else the database's key folder)",
        )
        p.add_argument("--venue", help="venue name in the record (default $REELGATE_VENUE, host)")
        p.set_defaults(handler=_export, kind=kind)
    v = kinds.add_parser("verify", help="verify an export offline; exit 1 if altered")
    v.add_argument("file", metavar="FILE", help="the KIND-ID.json file")
    v.add_argument("--public-key", metavar="K", required=True, help="the venue's public key (PEM)")
    v.add_argument("--signature", metavar="SIG", help="the signature file (default FILE.sig)")
    v.set_defaults(handler=_verify)


def _key_path(given: str | None, database: str | None) -> Path:
    """The option, then what the console finds too (:func:`signing_key_file`)."""
    from gateway.app.database import resolve
    from gateway.records.chain import signing_key_file

    found = Path(given) if given else signing_key_file(resolve(database))
    if found is None:
        raise OperatorError(
            f"--signing-key: no signing key given, ${SIGNING_KEY_ENV} unset and the "
            "database has no key folder with signing.key"
        )
    return found


def _export(args: argparse.Namespace) -> int:
    from gateway.records.document import ExportContext
    from gateway.records.exporter import build_export, write_export
    from gateway.super9.venue import venue_zone

    try:
        key = load_signing_key(_key_path(args.signing_key, args.database))
    except RecordKeyError as exc:
        raise OperatorError(f"--signing-key {exc}") from None
    venue = args.venue or os.environ.get("REELGATE_VENUE") or socket.gethostname()

    async def work(session: AsyncSession) -> dict[str, Any]:
        ctx = ExportContext(venue, await venue_zone(session), datetime.now(UTC))
        return await build_export(session, args.kind, args.id, ctx)

    document = run(args.database, work)
    files = write_export(document, Path(args.out), key)
    print(f"{files.json}\n{files.sig}\n{files.html}\nsha256 {files.sha256}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from gateway.records.exporter import verify_export

    try:
        public = load_public_key(Path(args.public_key))
    except RecordKeyError as exc:
        raise OperatorError(f"--public-key {exc}") from None
    sig = Path(args.signature) if args.signature else None
    verdict = verify_export(Path(args.file), public, sig)
    if not verdict.ok:
        print(f"{args.file}: NOT VALID: {verdict.problem}", file=sys.stderr)
        return 1
    doc = verdict.document or {}
    print(
        f"{args.file}: valid {doc.get('kind')} {doc.get('id')} of {doc.get('venue')}, "
        f"generated {doc.get('generated_at')}" + (" (TRAINING)" if doc.get("training") else "")
    )
    return 0
