#!/usr/bin/env python3
"""Verify a Reelgate signed export without Reelgate.

Written from docs/records.md ("Exports") alone: the Python standard library plus the
``cryptography`` package for Ed25519.  It imports nothing of Reelgate.

    python3 verify_export.py EXPORT.json VENUE_PUBLIC_KEY.pem [EXPORT.json.sig]

Exit 0 and one line when the file is exactly what the venue signed; exit 1 and one
line naming the problem otherwise.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

USAGE = "usage: verify_export.py EXPORT.json VENUE_PUBLIC_KEY.pem [EXPORT.json.sig]"


def fail(message: str) -> int:
    print(f"INVALID: {message}")
    return 1


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(USAGE)
        return 2
    export = Path(argv[0])
    data = export.read_bytes()  # the signature covers these bytes exactly
    sig = json.loads(Path(argv[2] if len(argv) == 3 else f"{export}.sig").read_text("utf-8"))
    venue_key = serialization.load_pem_public_key(Path(argv[1]).read_bytes())
    if not isinstance(venue_key, Ed25519PublicKey):
        return fail("the public key file is not an Ed25519 key")
    if sig.get("alg") != "Ed25519":
        return fail(f"unknown signature algorithm {sig.get('alg')!r}")
    raw = venue_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    if base64.b64decode(sig["public_key"]) != raw:
        return fail("signed with a key other than the venue's public key")
    digest = hashlib.sha256(data).hexdigest()
    if sig.get("sha256") != digest:
        return fail(f"sha256 of the file is {digest}, the signature file says {sig.get('sha256')}")
    try:
        venue_key.verify(base64.b64decode(sig["value"]), data)
    except InvalidSignature:
        return fail("the Ed25519 signature does not match the file's bytes")
    # Signed: now read it, and check it is the canonical form the docs describe.
    document = json.loads(data.decode("utf-8"))
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if canonical.encode("utf-8") != data:
        return fail("signed, but not in canonical form")
    if document.get("format") != "reelgate-export/1":
        return fail(f"unknown format {document.get('format')!r}")
    training = " TRAINING" if document["training"] else ""
    print(
        f"VALID{training}: {document['kind']} {document['id']} of {document['venue']}, "
        f"generated {document['generated_at']}, sha256 {digest}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
