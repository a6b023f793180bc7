"""``audit verify`` asked from a desk, and its outcome kept where every desk can see it.

The console's and the API's verification run the same checks as the host's ``reelgate
audit verify`` (:func:`gateway.records.verify.verify`: the chain, its checkpoints —
their signatures when the venue's public key lies beside the audit key —, the sealed
results and the standings at every cut).  The witness copy is not read here: it lives
with the collector, and ``audit verify --witness`` on the host stays the regulator's
whole check.

The outcome is appended to the chain itself as an ``audit.verified`` row under the
account that asked, so the Tonight board shows the last finding and who looked, and a
later ``audit verify`` vouches for that row too: an insider who edits the row to read
"intact" breaks the chain they meant to hide.  The row keeps the count and the first
findings only; the whole list is a new verification away.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.records.chain import SignatureChecker, key_paths
from gateway.records.verify import verify
from storage import audit
from storage.audit import AuditEntry, VerifyResult

VERIFIED_ACTION = "audit.verified"
SUBJECT = "audit"
KEPT_FINDINGS = 10  # lines kept on the row; the count is always whole


@dataclass(frozen=True, slots=True)
class Verification:
    """One verification's outcome, as the ``audit.verified`` row keeps it."""

    audit_id: int
    at: datetime
    actor: str
    ok: bool
    rows_checked: int
    findings: int
    first_findings: tuple[str, ...]
    signatures_checked: bool
    amendments: int
    checkpoints: int

    def headline(self) -> str:
        return _headline(
            self.ok, self.rows_checked, self.findings, self.checkpoints,
            self.signatures_checked, self.amendments,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Outcome:
    """A verification just run: the whole result, and whether signatures were checked."""

    result: VerifyResult
    signatures_checked: bool

    def headline(self) -> str:
        r = self.result
        return _headline(
            r.ok, r.rows_checked, len(r.findings), r.checkpoints,
            self.signatures_checked, len(r.amendments),
        )  # fmt: skip


def _headline(
    ok: bool, rows: int, findings: int, checkpoints: int, signed: bool, amendments: int
) -> str:
    """The first line ``reelgate audit verify`` would print, short."""
    if not ok:
        return f"audit log BROKEN: {findings} finding(s) in {rows} rows"
    points = f"{checkpoints} checkpoint(s) " + ("signed" if signed else "(signatures NOT checked)")
    amended = f", {amendments} amendment(s)" if amendments else ""
    return f"audit log intact{amended}: {rows} rows, {points}"


def _checker(url: str) -> SignatureChecker | None:
    """The venue's public key beside the audit key, when it is there (as the CLI's)."""
    paths = key_paths(url)
    public: Path | None = None if paths is None else paths.public_key
    return SignatureChecker(public) if public is not None and public.exists() else None


async def verify_and_record(session: AsyncSession, url: str, actor: str) -> Outcome:
    """Verify the whole chain in ``session``'s transaction, then record the outcome under
    ``actor`` (the row is chained when the caller's transaction commits)."""
    checker = _checker(url)
    result = await verify(session, check_signature=checker)
    outcome = Outcome(result, signatures_checked=checker is not None)
    details: dict[str, Any] = {
        "ok": result.ok,
        "rows_checked": result.rows_checked,
        "last_id": result.last_id,
        "findings": len(result.findings),
        "first_findings": [f.line() for f in result.findings[:KEPT_FINDINGS]],
        "signatures_checked": outcome.signatures_checked,
        "amendments": len(result.amendments),
        "checkpoints": result.checkpoints,
    }
    await audit.record(
        session, actor=actor, action=VERIFIED_ACTION, subject=SUBJECT, details=details
    )
    return outcome


def _of(row: AuditEntry) -> Verification:
    d = row.details_dict()
    return Verification(
        audit_id=row.id,
        at=row.at,
        actor=row.actor,
        ok=bool(d.get("ok")),
        rows_checked=int(d.get("rows_checked", 0)),
        findings=int(d.get("findings", 0)),
        first_findings=tuple(str(x) for x in d.get("first_findings", [])),
        signatures_checked=bool(d.get("signatures_checked")),
        amendments=int(d.get("amendments", 0)),
        checkpoints=int(d.get("checkpoints", 0)),
    )


async def last_verification(session: AsyncSession) -> Verification | None:
    """The newest verification asked from a desk, or None when none was."""
    row = await session.scalar(
        select(AuditEntry)
        .where(AuditEntry.action == VERIFIED_ACTION)
        .order_by(AuditEntry.id.desc())
        .limit(1)
    )
    return None if row is None else _of(row)
