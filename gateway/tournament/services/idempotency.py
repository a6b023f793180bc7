"""A retried sale answers with the first sale, never a second charge.

Theory of operation
-------------------
A sale is retried when the desk does not learn whether it went through: a timeout, a
dropped connection, a double click.  Each sale may carry a key that names it:

* the **till slip** (``reference``): unique per cashier and venue-local day — the slip
  is the money's own proof, so a second sale on one slip is the same sale;
* else the API's ``Idempotency-Key`` header, unique per cashier.

The key is stored on the purchase (``entry_purchases.idempotency_key``, unique) with
the SHA-256 of what was asked (``request_digest``).  A sale with a key first looks the
key up: found with the same digest, the stored sale is the answer (same purchase, same
entries, nothing written); found with another digest, the key was reused for a
different sale and it is refused, naming the key.  Two retries racing past the look-up
both insert; the unique key lets one commit, and the other — inside a savepoint —
reads the winner's row and answers with it (on PostgreSQL the loser's insert waits
for the winner's commit, and a read-committed read then sees it).

The key is scoped by cashier so one desk cannot replay, or block, another's slip.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import IdempotencyConflict, OperatorError
from storage.tournament import Entry, EntryPurchase

HEADER_MAX = 100


@dataclass(frozen=True)
class SaleKey:
    stored: str  # entry_purchases.idempotency_key
    shown: str  # as the desk knows it, for a refusal


def sale_key(
    cashier: str, *, reference: str | None, header: str | None, now: datetime, zone: str
) -> SaleKey | None:
    """The sale's key: the till slip per cashier and venue day, else the header's."""
    if reference:
        day = now.astimezone(ZoneInfo(zone)).date().isoformat()
        return SaleKey(f"slip|{cashier}|{day}|{reference}", f"till slip {reference!r} ({day})")
    if header is not None:
        header = header.strip()
        if not header or len(header) > HEADER_MAX or not header.isprintable():
            raise OperatorError(f"Idempotency-Key: 1 to {HEADER_MAX} printable characters, please")
        return SaleKey(f"api|{cashier}|{header}", f"Idempotency-Key {header!r}")
    return None


def digest(**asked: Any) -> str:
    """SHA-256 of the request's content, canonical JSON."""
    text = json.dumps(asked, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def prior_sale(
    session: AsyncSession, key: SaleKey, asked: str
) -> tuple[EntryPurchase, tuple[int, ...]] | None:
    """The sale already made under ``key`` with its entries; refused when it was made
    for a different request."""
    found = (
        await session.execute(
            select(EntryPurchase).where(EntryPurchase.idempotency_key == key.stored)
        )
    ).scalar_one_or_none()
    if found is None:
        return None
    if found.request_digest != asked:
        raise IdempotencyConflict(
            f"{key.shown} was used for purchase {found.id}, a different sale; "
            "nothing saved (a new sale needs a new slip or key)"
        )
    ids = await session.scalars(
        select(Entry.id).where(Entry.purchase_id == found.id).order_by(Entry.id)
    )
    return found, tuple(ids)
