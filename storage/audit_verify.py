"""Verify the keyed audit chain, its signed checkpoints and every sealed result row.

One pass over ``audit_log`` in keyset pages (plain Core rows, no ORM objects; the MAC in
a tight loop) checks every row's MAC against its content and its link to the row before,
and gathers, on the way, the seals (:mod:`storage.seals`) and the chained checkpoints.
A bad row does not hide the rows after it: the pass re-links on the stored MAC and goes
on, so each altered, deleted or inserted row is named once.  Then every checkpoint's
signature is checked with the venue's public key (a callable from the gateway: storage
does no key handling), every sealed table is re-hashed row by row against its latest
seal, and the cross-checks of :mod:`storage.records_checks` run.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from sqlalchemy import DateTime, select, type_coerce
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from storage import records_checks, seals
from storage.audit import (
    CHECKPOINT_ACTION,
    GENESIS_ACTION,
    GENESIS_HASH,
    AuditChainHead,
    AuditCheckpoint,
    AuditEntry,
    ChainKeys,
    Finding,
    VerifyResult,
    checkpoint_payload,
    require_keys,
    row_body,
    row_mac,
)
from storage.seal_notes import Key

_PAGE = 20_000
_SLICE = 2_000
_MAX_PAGES = 10_000_000  # bounds the loop far above any venue's history
_SPECIAL = frozenset({seals.SEAL_ACTION, seals.SCOPE_ACTION, CHECKPOINT_ACTION, GENESIS_ACTION})
CheckSignature = Callable[[bytes, bytes, str], bool]  # (payload, signature, fingerprint)


@dataclass
class _Chain:
    """What the pass over the log gathers."""

    key: bytes
    key_id: str
    findings: list[Finding]
    want_positions: set[int]
    prev: str = GENESIS_HASH
    expected: int = 1
    checked: int = 0
    keyed_from: int | None = None
    wrong_key: bool = False
    seal_map: dict[tuple[str, Key], tuple[str | None, int]] = field(default_factory=dict)
    scopes: list[list[str]] = field(default_factory=list)  # the sealed tables stated
    chained_points: dict[int, dict[str, Any]] = field(default_factory=dict)
    macs_at: dict[int, str] = field(default_factory=dict)

    def bad(self, row_id: int, problem: str) -> None:
        self.findings.append(Finding("audit_log", row_id, problem))


def _details(chain: _Chain, row_id: int, text: str) -> dict[str, Any]:
    try:
        loaded = json.loads(text)
    except ValueError:
        chain.bad(row_id, "details are not JSON")
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _genesis(chain: _Chain, row_id: int, prev_hash: str, details: str) -> None:
    chain.keyed_from = row_id
    data = _details(chain, row_id, details)
    if data.get("key_id") != chain.key_id:
        chain.wrong_key = True
        chain.bad(
            row_id, f"chain keyed under key {data.get('key_id')}, not this key {chain.key_id}"
        )
    if data.get("legacy_rows") != row_id - 1 or data.get("legacy_head") != prev_hash:
        chain.bad(row_id, "genesis row does not seal the legacy chain before it")
    stated = seals.stated_scope(GENESIS_ACTION, data)
    if stated is not None:
        chain.scopes.append(stated)


def _special(chain: _Chain, row_id: int, action: str, details: str) -> None:
    if action == seals.SEAL_ACTION:
        try:  # a forged row (named by its MAC) may hold anything: it must not stop the pass
            for table, seal_id, digest in _details(chain, row_id, details).get("rows", []):
                chain.seal_map[(str(table), seals.key_from_json(seal_id))] = (digest, row_id)
        except (TypeError, ValueError):
            chain.bad(row_id, "seal details are not [table, key, digest] rows")
    elif action == seals.SCOPE_ACTION:
        stated = seals.stated_scope(action, _details(chain, row_id, details))
        if stated is not None:
            chain.scopes.append(stated)
    elif action == CHECKPOINT_ACTION:
        data = _details(chain, row_id, details)
        chain.chained_points[int(data.get("checkpoint", -1))] = data


def _check_row(chain: _Chain, row: Any) -> None:
    """The long way: gaps, links, the legacy scheme, the genesis, seals, checkpoints."""
    row_id, action, details, prev_hash, stored, keyed, body = row
    if row_id != chain.expected:
        chain.bad(chain.expected, f"row {chain.expected}..{row_id - 1} deleted")
    elif prev_hash != chain.prev:
        chain.bad(row_id, "does not link to the row before it")
    if keyed:
        if chain.keyed_from is None:
            if action != GENESIS_ACTION:
                chain.bad(row_id, "keyed row before the chain's genesis row")
            _genesis(chain, row_id, prev_hash, details)
        computed = row_mac(chain.key, prev_hash, body)
    else:
        if chain.keyed_from is not None:
            chain.bad(row_id, "unkeyed row after the chain was keyed")
        computed = hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()
    if computed != stored and not chain.wrong_key:
        chain.bad(row_id, "altered: its MAC does not match its content")
    if action in (seals.SEAL_ACTION, seals.SCOPE_ACTION, CHECKPOINT_ACTION):
        _special(chain, row_id, action, details)
    if row_id in chain.want_positions:
        chain.macs_at[row_id] = stored
    chain.prev = stored
    chain.expected = row_id + 1
    chain.checked += 1


def _fast_page(chain: _Chain, page: Sequence[Any]) -> None:
    """The hot loop: an ordinary keyed row that links costs one HMAC over its body;
    anything else (a gap, a bad link, a seal, a checkpoint, the genesis) goes the long
    way through :func:`_check_row`."""
    key, want, special, mac = chain.key, chain.want_positions, _SPECIAL, hmac.digest
    prev, expected, fast = chain.prev, chain.expected, 0
    ready = chain.keyed_from is not None and not chain.wrong_key
    for row in page:
        row_id, action, _details, prev_hash, stored, keyed, body = row
        if not (ready and keyed and row_id == expected and prev_hash == prev) or (
            action in special or row_id in want
        ):
            chain.prev, chain.expected = prev, expected
            _check_row(chain, row)
            prev, expected = chain.prev, chain.expected
            ready = chain.keyed_from is not None and not chain.wrong_key
            continue
        if mac(key, f"{prev_hash}\n{body}".encode(), "sha256").hex() != stored:
            chain.bad(row_id, "altered: its MAC does not match its content")
        prev, expected, fast = stored, row_id + 1, fast + 1
    chain.prev, chain.expected = prev, expected
    chain.checked += fast


# PostgreSQL writes each row's body itself: the same canonical JSON as
# storage.audit.row_body (to_json escapes exactly as Python's json with
# ensure_ascii=False: \" \\ \b \f \n \r \t and \u00xx for other control
# characters; tests check the two agree), so the verifier only computes the HMAC.
# The details travel separately only for the rows it must read (seals, checkpoints).
_PG_PAGE = f"""
SELECT id, action,
       CASE WHEN action IN ('{seals.SEAL_ACTION}', '{seals.SCOPE_ACTION}', '{CHECKPOINT_ACTION}',
                            '{GENESIS_ACTION}')
            THEN details END,
       prev_hash, hash, keyed,
       '{{"action":' || to_json(action)::text || ',"actor":' || to_json(actor)::text
       || ',"at":"' || to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')
       || '+00:00","details":' || to_json(details)::text || ',"id":' || id::text
       || ',"reason":' || COALESCE(to_json(reason)::text, 'null')
       || ',"subject":' || to_json(subject)::text || '}}'
FROM audit_log WHERE id > $1 ORDER BY id LIMIT {_PAGE}
"""


async def _fetcher(conn: AsyncConnection) -> Callable[[int], Awaitable[Sequence[Any]]]:
    """Keyset pages of ``(id, action, details, prev_hash, hash, keyed, body)``: from the
    driver itself on PostgreSQL (no result processing), built here on SQLite."""
    if conn.dialect.name == "postgresql":
        raw = await conn.get_raw_connection()
        driver: Any = raw.driver_connection

        async def from_driver(after: int) -> Sequence[Any]:
            rows: Sequence[Any] = await driver.fetch(_PG_PAGE, after)
            return rows

        return from_driver
    t = AuditEntry.__table__
    at = type_coerce(t.c.at, DateTime(timezone=True))
    cols = (t.c.id, at, t.c.actor, t.c.action, t.c.subject, t.c.reason, t.c.details)
    query = select(*cols, t.c.prev_hash, t.c.hash, t.c.keyed).order_by(t.c.id).limit(_PAGE)

    async def from_core(after: int) -> Sequence[Any]:
        page = []
        for row_id, when, actor, action, subject, reason, details, prev, stored, keyed in (
            await conn.execute(query.where(t.c.id > after))
        ).all():
            when = when if when.tzinfo else when.replace(tzinfo=UTC)  # SQLite: stored as UTC
            body = row_body(row_id, when, actor, action, subject, reason, details)
            page.append((row_id, action, details, prev, stored, keyed, body))
        return page

    return from_core


async def _walk(conn: AsyncConnection, chain: _Chain) -> None:
    """Fetch page k+1 while page k is checked (in slices, so the read makes progress)."""
    fetch = await _fetcher(conn)
    pending: asyncio.Future[Sequence[Any]] | None = asyncio.ensure_future(fetch(0))
    for _ in range(_MAX_PAGES):
        if pending is None:
            return
        page = await pending
        pending = asyncio.ensure_future(fetch(page[-1][0])) if len(page) == _PAGE else None
        for start in range(0, len(page), _SLICE):
            _fast_page(chain, page[start : start + _SLICE])
            await asyncio.sleep(0)


async def _check_head(conn: AsyncConnection, chain: _Chain) -> None:
    head = (await conn.execute(select(AuditChainHead.__table__))).mappings().first()
    head_id = int(head["last_id"]) if head else 0
    head_hash = str(head["last_hash"]) if head else GENESIS_HASH
    if head_id != chain.expected - 1:
        chain.bad(max(head_id, chain.expected - 1), f"chain head says row {head_id} is last")
    elif head_hash != chain.prev:
        chain.bad(head_id, "chain head MAC does not match the last row")
    if head is not None and head["keyed_from"] != chain.keyed_from:
        chain.bad(head_id, f"chain head says keyed from {head['keyed_from']}")
    if chain.checked and chain.keyed_from is None:
        chain.bad(chain.checked, "the chain was never keyed: no row is under the audit key")


async def _checkpoints(
    conn: AsyncConnection, chain: _Chain, points: list[Any], check: CheckSignature | None
) -> None:
    seen: set[int] = set()
    for p in points:
        seen.add(int(p.id))
        payload = checkpoint_payload(p.position, p.mac, p.at)
        if chain.macs_at.get(p.position) != p.mac:
            chain.findings.append(
                Finding("audit_checkpoint", p.id, f"MAC at position {p.position} differs")
            )
        if check is not None and not check(payload, bytes.fromhex(p.signature), p.key_fingerprint):
            chain.findings.append(Finding("audit_checkpoint", p.id, "signature does not verify"))
        chained = chain.chained_points.get(int(p.id))
        if chained is None:
            chain.findings.append(
                Finding("audit_checkpoint", p.id, "inserted without an audit row")
            )
        elif (chained.get("position"), chained.get("mac"), chained.get("signature")) != (
            p.position,
            p.mac,
            p.signature,
        ):
            chain.findings.append(Finding("audit_checkpoint", p.id, "differs from its audit row"))
    for missing in sorted(set(chain.chained_points) - seen):
        chain.findings.append(Finding("audit_checkpoint", missing, "deleted"))


async def _tables(conn: AsyncConnection, chain: _Chain) -> int:
    checked = 0
    scope = seals.scope_of(chain.scopes)
    for name in sorted(seals.SEALED):
        checked += await _table(conn, chain, name, name in scope)
    return checked


async def _table(conn: AsyncConnection, chain: _Chain, name: str, in_scope: bool) -> int:
    """One table against its seals.  Outside the scope (a database keyed before the
    table was sealed, not yet upgraded) its unsealed rows are named once, together."""
    checked, unsealed, last, present = 0, 0, None, set()
    key_column = seals.SEALED[name].primary_key.columns.values()[0].name
    for _ in range(_MAX_PAGES):
        page = (await conn.execute(seals.page_query(name, last, checked, _PAGE))).mappings().all()
        for row in page:
            key = seals.key_of(name, row)
            present.add(key)
            checked += 1
            sealed = chain.seal_map.get((name, key))
            if sealed is None or sealed[0] is None:
                if in_scope:
                    chain.findings.append(
                        Finding(name, seals.key_label(key), "inserted without an audit row")
                    )
                else:
                    unsealed += 1
            elif seals.row_digest(name, row) != sealed[0]:
                chain.findings.append(
                    Finding(
                        name, seals.key_label(key), f"differs from its seal (audit row {sealed[1]})"
                    )
                )
        if len(page) < _PAGE:
            break
        last = page[-1][key_column]
    if unsealed:
        chain.findings.append(
            Finding(
                name,
                "*",
                f"{unsealed} row(s) not under the seals yet: run `reelgate db upgrade` "
                "with the audit key",
            )
        )
    for (sealed_table, key), (digest, at_row) in chain.seal_map.items():
        if sealed_table == name and digest is not None and key not in present:
            chain.findings.append(
                Finding(name, seals.key_label(key), f"deleted (sealed at audit row {at_row})")
            )
    return checked


async def verify(
    session: AsyncSession,
    keys: ChainKeys | None = None,
    *,
    check_signature: CheckSignature | None = None,
) -> VerifyResult:
    """Everything :mod:`this module <storage.audit_verify>` describes; never writes.
    ``keys``: by default the ones bound to the session's engine."""
    keys = require_keys(session) if keys is None else keys
    conn = await session.connection()
    point_rows = (
        await conn.execute(select(AuditCheckpoint.__table__).order_by(AuditCheckpoint.id))
    ).all()
    chain = _Chain(keys.mac_key, keys.key_id, [], {int(p.position) for p in point_rows})
    await _walk(conn, chain)
    await _check_head(conn, chain)
    await _checkpoints(conn, chain, list(point_rows), check_signature)
    sealed = 0
    if not chain.wrong_key:
        sealed = await _tables(conn, chain)
        chain.findings.extend(await records_checks.run(conn))
    return VerifyResult(
        ok=not chain.findings,
        rows_checked=chain.checked,
        last_id=chain.expected - 1,
        last_hash=chain.prev,
        keyed_from=chain.keyed_from,
        checkpoints=len(point_rows),
        sealed_rows=sealed,
        findings=chain.findings,
    )
