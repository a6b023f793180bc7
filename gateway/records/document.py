"""The export document: ``reelgate-export/1`` around a kind's body.

::

    {"format": "reelgate-export/1", "kind": "heat", "id": "12",
     "generated_at": "2026-11-02T19:30:00+02:00", "venue": "Ridge Casino",
     "training": false, "body": {...}}

``id`` is always a string (a stage is ``TOURNAMENT:STAGE``); ``generated_at`` and every
instant in the body are venue-local with the offset.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from gateway.records.canonical import check, to_record
from gateway.records.signing import FORMAT

KINDS = ("heat", "stage", "tournament", "super9-session", "cashup")


@dataclass(frozen=True)
class ExportContext:
    venue: str
    zone: ZoneInfo
    generated_at: datetime


def build_document(
    kind: str, ident: str, body: dict[str, Any], ctx: ExportContext, *, training: bool
) -> dict[str, Any]:
    if kind not in KINDS:
        raise ValueError(f"kind: {kind!r} is not one of {', '.join(KINDS)}")
    document = {
        "format": FORMAT,
        "kind": kind,
        "id": ident,
        "generated_at": to_record(ctx.generated_at, ctx.zone),
        "venue": ctx.venue,
        "training": training,
        "body": to_record(body, ctx.zone),
    }
    check(document)
    return document
