"""Building, writing and verifying signed exports.

:func:`build_export` reads one record (heat, stage, tournament, Super 9 session or a
day's cash-up) into a ``reelgate-export/1`` document; :func:`write_export` writes
``KIND-ID.json`` (the canonical bytes), ``KIND-ID.json.sig`` (the detached Ed25519
signature, :mod:`.signing`) and ``KIND-ID.html`` (the printable report); an existing
file is never overwritten.  :func:`verify_export` checks a file offline against the
venue's public key.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import OperatorError
from gateway.records.canonical import canonical_bytes
from gateway.records.document import ExportContext, build_document
from gateway.records.heat_export import heat_body
from gateway.records.report_html import render
from gateway.records.signing import (
    SIG_SUFFIX,
    Verdict,
    raw_public,
    read_signature,
    sha256_hex,
    signature_for,
    verify_bytes,
)
from gateway.records.stage_export import stage_body
from gateway.records.super9_export import super9_body
from gateway.records.tournament_export import tournament_body
from gateway.records.training import is_training
from gateway.tournament.rules.enums import Stage
from gateway.tournament.services.common import find_tournament


def _int_id(kind: str, ident: str) -> int:
    if not ident.strip().isdigit():
        raise OperatorError(f"{kind} ID: {ident!r} is not a number")
    return int(ident)


def split_stage(ident: str) -> tuple[str, Stage]:
    """``TOURNAMENT:STAGE`` (tournament by id or name; stage qualifying|semi-final|final)."""
    tournament, sep, stage = ident.rpartition(":")
    try:
        if not sep or not tournament:
            raise ValueError
        return tournament, Stage(stage)
    except ValueError:
        known = "|".join(s.value for s in Stage)
        raise OperatorError(f"stage ID: {ident!r} is not TOURNAMENT:{known}") from None


async def _body(
    session: AsyncSession, kind: str, ident: str, zone: ZoneInfo
) -> tuple[str, dict[str, Any]]:
    """The body and the canonical id of the record ``kind`` ``ident`` (``zone``: the
    venue's, for the cash-up's day)."""
    if kind == "heat":
        return str(_int_id(kind, ident)), await heat_body(session, _int_id(kind, ident))
    if kind == "stage":
        ref, stage = split_stage(ident)
        t = await find_tournament(session, ref)
        return f"{t.id}:{stage.value}", await stage_body(session, t, stage)
    if kind == "tournament":
        t = await find_tournament(session, ident)
        return str(t.id), await tournament_body(session, t)
    if kind == "super9-session":
        return str(_int_id(kind, ident)), await super9_body(session, _int_id(kind, ident))
    if kind == "cashup":
        from gateway.records.cashup import cashup_body, parse_day

        day = parse_day(ident)
        return day.isoformat(), await cashup_body(session, day, zone=zone)
    raise OperatorError(f"export: unknown kind {kind!r}")


async def build_export(
    session: AsyncSession, kind: str, ident: str, ctx: ExportContext
) -> dict[str, Any]:
    canonical_id, body = await _body(session, kind, ident, ctx.zone)
    return build_document(kind, canonical_id, body, ctx, training=await is_training(session))


@dataclass(frozen=True)
class ExportFiles:
    json: Path
    sig: Path
    html: Path
    sha256: str


def file_stem(document: dict[str, Any]) -> str:
    ident = re.sub(r"[^A-Za-z0-9._-]+", "-", str(document["id"]))
    return f"{document['kind']}-{ident}"


def export_files(document: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, bytes]:
    """The three files of a signed export by name (``KIND-ID.json``, its ``.sig``, the
    ``.html`` report), as :func:`write_export` stores them and the console hands them out."""
    data = canonical_bytes(document)
    stem = file_stem(document)
    json_name = f"{stem}.json"
    signature = json.dumps(signature_for(data, json_name, key), indent=2, sort_keys=True)
    html = render(
        document,
        json_name=json_name,
        sha256=sha256_hex(data),
        public_key=base64.b64encode(raw_public(key.public_key())).decode("ascii"),
    )
    return {
        json_name: data,
        f"{json_name}{SIG_SUFFIX}": (signature + "\n").encode("utf-8"),
        f"{stem}.html": html.encode("utf-8"),
    }


def write_export(document: dict[str, Any], out_dir: Path, key: Ed25519PrivateKey) -> ExportFiles:
    made = export_files(document, key)
    stem = file_stem(document)
    files = ExportFiles(
        out_dir / f"{stem}.json",
        out_dir / f"{stem}.json{SIG_SUFFIX}",
        out_dir / f"{stem}.html",
        sha256_hex(made[f"{stem}.json"]),
    )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for path in (files.json, files.sig, files.html):
            if path.exists():
                raise OperatorError(f"{path}: already exists; an export is never overwritten")
        for path in (files.json, files.sig, files.html):
            path.write_bytes(made[path.name])
    except OSError as exc:
        raise OperatorError(f"--out {out_dir}: cannot write ({exc.strerror})") from None
    return files


def verify_export(path: Path, public: Ed25519PublicKey, sig_path: Path | None = None) -> Verdict:
    """Verify ``path`` against ``path.sig`` (or ``sig_path``) and the venue's key."""
    sig_file = sig_path or path.with_name(path.name + SIG_SUFFIX)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise OperatorError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        signature = read_signature(sig_file)
    except OSError as exc:
        raise OperatorError(f"{sig_file}: cannot read the signature ({exc.strerror})") from None
    except ValueError as exc:
        return Verdict.bad(f"{sig_file}: not a signature file ({exc})")
    return verify_bytes(data, signature, public)
