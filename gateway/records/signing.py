"""Signing and verifying an export: a detached Ed25519 signature over the file's bytes.

An export ``NAME.json`` holds exactly the canonical bytes of its document
(:mod:`.canonical`); ``NAME.json.sig`` is a small JSON object::

    {"alg": "Ed25519", "file": "NAME.json", "public_key": "<base64, 32 raw bytes>",
     "sha256": "<hex of the file's bytes>", "value": "<base64, 64-byte signature>"}

The signature covers the file's bytes as stored, so a verifier needs no JSON
canonicalisation at all: hash or verify the bytes, then (optionally) parse them.  The
``public_key`` in the ``.sig`` only says which key signed; trust comes from the venue's
public key obtained separately (``--public-key``), which must match it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from gateway.records.canonical import NotCanonical, canonical_bytes

ALG = "Ed25519"
FORMAT = "reelgate-export/1"
SIG_SUFFIX = ".sig"


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def signature_for(data: bytes, file_name: str, key: Ed25519PrivateKey) -> dict[str, str]:
    """The ``.sig`` object for the file ``file_name`` holding ``data``."""
    return {
        "alg": ALG,
        "file": file_name,
        "public_key": base64.b64encode(raw_public(key.public_key())).decode("ascii"),
        "sha256": sha256_hex(data),
        "value": base64.b64encode(key.sign(data)).decode("ascii"),
    }


@dataclass(frozen=True)
class Verdict:
    ok: bool
    problem: str | None = None  # one line when not ok
    document: dict[str, Any] | None = None

    @classmethod
    def bad(cls, problem: str) -> Verdict:
        return cls(False, problem)


def verify_bytes(data: bytes, sig: dict[str, Any], public: Ed25519PublicKey) -> Verdict:
    """Check ``data`` (the export file's bytes) against its ``.sig`` and the venue key."""
    if sig.get("alg") != ALG:
        return Verdict.bad(f"signature: algorithm {sig.get('alg')!r}, expected {ALG}")
    try:
        given_key = base64.b64decode(str(sig.get("public_key", "")), validate=True)
        value = base64.b64decode(str(sig.get("value", "")), validate=True)
    except (binascii.Error, ValueError):
        return Verdict.bad("signature: public_key or value is not base64")
    if given_key != raw_public(public):
        return Verdict.bad("signature: made with another key than the venue's public key")
    try:
        public.verify(value, data)
    except InvalidSignature:
        return Verdict.bad(
            f"signature does not match the file (sha256 {sha256_hex(data)}): altered or "
            "not the file that was signed"
        )
    return _check_document(data)


def _check_document(data: bytes) -> Verdict:
    """A correctly signed file should also be a canonical ``reelgate-export/1``
    document; anything else is a signing bug, reported all the same."""
    try:
        document = json.loads(data.decode("utf-8"))
        if canonical_bytes(document) != data:
            return Verdict.bad("signed file is not in canonical form")
    except (UnicodeDecodeError, json.JSONDecodeError, NotCanonical) as exc:
        return Verdict.bad(f"signed file is not a canonical JSON document ({exc})")
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return Verdict.bad(f"signed file is not a {FORMAT} document")
    return Verdict(True, None, document)


def read_signature(path: Path) -> dict[str, Any]:
    """The ``.sig`` object next to an export (raises OSError or ValueError)."""
    loaded = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(loaded, dict):
        raise ValueError("not a JSON object")
    return loaded
