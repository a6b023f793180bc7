#!/usr/bin/env python3
"""Verify a Reelgate signed export without Reelgate.

Written from docs/records.md ("Exports") alone: the Python standard library plus the
``cryptography`` package for Ed25519.  It imports nothing of Reelgate.

    python3 verify_export.py EXPORT.json VENUE_PUBLIC_KEY.pem [EXPORT.json.sig]

Exit 0 and one line when the file is exactly what the venue signed; exit 1 and one
line naming the problem otherwise.

A body with a ``hotseat`` list (hot-seat draws and wild cards, docs/rules.md HS1-HS7) is
also recomputed: each revealed seed against its commitment, the draw moments from the
seed and the heat's times, and every draw's picks and winner from its candidates and the
seats that could not win (algorithm ``hotseat/1``, as written in docs/records.md).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

USAGE = "usage: verify_export.py EXPORT.json VENUE_PUBLIC_KEY.pem [EXPORT.json.sig]"


def fail(message: str) -> int:
    print(f"INVALID: {message}")
    return 1


def _uniform(seed: bytes, context: str, n: int) -> int:
    limit = 2**256 - (2**256 % n)
    for counter in range(1000):
        digest = hmac.new(seed, f"{context}|{counter}".encode(), hashlib.sha256).digest()
        value = int.from_bytes(digest, "big")
        if value < limit:
            return value % n
    raise ValueError("no unbiased value in 1000 tries")


def _moments(seed: bytes, subject: str, start: datetime, end: datetime, n: int) -> list[datetime]:
    seconds = int((end - start).total_seconds())
    out = []
    for i in range(n):
        low, high = i * seconds // n, (i + 1) * seconds // n
        out.append(
            start + timedelta(seconds=low + _uniform(seed, f"{subject}|moment|{i}", high - low))
        )
    return out


def _picks(seed: bytes, subject: str, index: int, draw: dict[str, Any]) -> tuple[list[str], Any]:
    remaining = sorted(set(draw["candidates"]))
    bad = set(draw["ineligible"])
    picks: list[str] = []
    while remaining:
        pick = remaining[_uniform(seed, f"{subject}|winner|{index}|{len(picks)}", len(remaining))]
        picks.append(pick)
        if pick not in bad:
            return picks, pick
        remaining.remove(pick)
    return picks, None


def check_hotseat(body: dict[str, Any]) -> tuple[str | None, int]:
    """The first hot-seat draw that does not recompute (or None), and how many did."""
    recomputed = 0
    for item in body.get("hotseat") or []:
        subject = item["subject"]
        if item["algorithm"] != "hotseat/1":
            return f"{subject}: unknown draw algorithm {item['algorithm']!r}", recomputed
        if item["seed"] is None:
            if item["draws_taken"]:
                return f"{subject}: draws recorded but the seed is not revealed", recomputed
            continue  # committed, not yet revealed (HS5): nothing to recompute
        seed = bytes.fromhex(item["seed"])
        prefix = b"reelgate-hotseat/1\n" + subject.encode() + b"\n"
        if hashlib.sha256(prefix + seed).hexdigest() != item["commitment"]:
            return f"{subject}: the revealed seed does not match the commitment", recomputed
        if item["start"] is not None:
            start, end = (datetime.fromisoformat(item[k]) for k in ("start", "end"))
            expected = _moments(seed, subject, start, end, item["draws"])
            for draw in item["draws_taken"]:
                if datetime.fromisoformat(draw["moment"]) != expected[draw["index"]]:
                    return (
                        f"{subject}: draw {draw['index']} was not taken at its moment",
                        recomputed,
                    )
        for draw in item["draws_taken"]:
            picks, winner = _picks(seed, subject, draw["index"], draw)
            if picks != draw["picks"] or winner != draw["winner"]:
                return (
                    f"{subject}: draw {draw['index']} recomputes to {winner!r}, "
                    f"not {draw['winner']!r}",
                    recomputed,
                )
            recomputed += 1
    return None, recomputed


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
    problem, draws = check_hotseat(document["body"])
    if problem is not None:
        return fail(f"signed, but hot-seat {problem}")
    training = " TRAINING" if document["training"] else ""
    hotseat = f", {draws} hot-seat draws recomputed" if draws else ""
    print(
        f"VALID{training}: {document['kind']} {document['id']} of {document['venue']}, "
        f"generated {document['generated_at']}, sha256 {digest}{hotseat}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
