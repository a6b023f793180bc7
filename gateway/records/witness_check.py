"""``audit verify``'s check of the database against its witness: a cut-off tail.

Every ``head`` entry says "the chain stood at position P with MAC M": the database must
still hold row P with that MAC.  What it does not is reported as such:

* **truncated** — rows after the database's last row were deleted and the head row
  still names a later position (the chain check names it too);
* **rolled back** — the rows were deleted and the head set back (or an older backup put
  in place behind Reelgate's back): the database ends at D, the witness saw W > D;
* **rolled back and rewritten** — after a rollback new rows were written at the lost
  positions: the witness's MAC at a position differs from the database's.

A ``restore`` entry, written by ``reelgate db restore`` before its own audit row
(``audit.restore``, naming the backup and the positions lost), voids the heads
witnessed before it beyond the restored end: verify reports the restore (who, when,
which backup, which rows were lost) and does not call it tampering.  A ``restore``
entry without its audit row, or an audit row without its entry, is a finding: neither
can be made without the key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.records.witness_entry import RESTORE_ACTION, Entry, parse
from storage.audit import AuditChainHead, AuditEntry, ChainKeys, Finding

_CHUNK = 1_000


@dataclass
class WitnessReport:
    source: str  # what was read ("file /var/lib/...", or why nothing was)
    entries: int = 0
    last_witnessed: int = 0
    verdict: str | None = None  # "TRUNCATED", "ROLLED BACK" or None
    headline: str | None = None  # the one line saying so, with the rows missing
    missing: tuple[int, int] | None = None  # first and last position missing
    restores: list[str] = field(default_factory=list)  # restores made by the command
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "entries": self.entries,
            "last_witnessed": self.last_witnessed,
            "verdict": self.verdict,
            "headline": self.headline,
            "missing": list(self.missing) if self.missing else None,
            "restores": self.restores,
            "warnings": self.warnings,
        }


def span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}..{last}"


def rows(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"


async def _macs(session: AsyncSession, positions: list[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    for start in range(0, len(positions), _CHUNK):
        chunk = positions[start : start + _CHUNK]
        rows = await session.execute(
            select(AuditEntry.id, AuditEntry.hash).where(AuditEntry.id.in_(chunk))
        )
        found.update({int(i): str(h) for i, h in rows.all()})
    return found


async def _restore_rows(session: AsyncSession) -> list[tuple[int, str, Any, dict[str, Any]]]:
    rows = await session.execute(
        select(AuditEntry.id, AuditEntry.actor, AuditEntry.at, AuditEntry.details)
        .where(AuditEntry.action == RESTORE_ACTION)
        .order_by(AuditEntry.id)
    )
    out = []
    for row_id, actor, at, details in rows.all():
        try:
            data = json.loads(details)
        except ValueError:
            data = {}
        out.append((int(row_id), str(actor), at, data if isinstance(data, dict) else {}))
    return out


def _apply_restores(
    entries: list[Entry], rows: list[tuple[int, str, Any, dict[str, Any]]], report: WitnessReport
) -> list[Entry]:
    """The head entries still standing: those a recorded restore voided are reported."""
    heads: list[Entry] = []
    unmatched = list(rows)
    for entry in entries:
        if entry.kind == "head":
            heads.append(entry)
            continue
        match = next(
            (
                r
                for r in unmatched
                if (r[3].get("restored_to"), r[3].get("lost_to")) == (entry.position, entry.lost_to)
            ),
            None,
        )
        if match is None:
            report.findings.append(
                Finding(
                    "witness",
                    f"line {entry.line_no}",
                    f"restore to position {entry.position} announced, but the database has "
                    f"no {RESTORE_ACTION} row for it",
                )
            )
            continue
        unmatched.remove(match)
        row_id, actor, at, data = match
        heads = [h for h in heads if h.position <= entry.position]
        lost = (
            f"rows {span(entry.position + 1, entry.lost_to)} lost"
            if entry.lost_to > entry.position
            else "no witnessed row lost"
        )
        report.restores.append(
            f"restored from backup {data.get('backup', '?')} by {actor} at "
            f"{at.isoformat(timespec='seconds')} (audit row {row_id}): {lost}"
        )
    for row_id, _actor, _at, _data in unmatched:
        report.findings.append(
            Finding("audit_log", row_id, "restore recorded, but the witness never saw it")
        )
    return heads


async def check(
    session: AsyncSession, keys: ChainKeys, text: str | None, source: str
) -> WitnessReport:
    """Compare the witness ``text`` (None: nothing to read, ``source`` says why)."""
    report = WitnessReport(source)
    if text is None:
        report.warnings.append(f"witness: {source}; a cut-off tail cannot be detected")
        return report
    entries, bad, other_keys = parse(text, keys.mac_key, keys.key_id)
    report.entries = len(entries)
    for unreadable in bad:
        report.findings.append(Finding("witness", f"line {unreadable.line_no}", unreadable.problem))
    if other_keys:
        report.warnings.append(f"witness: {other_keys} entries under another audit key ignored")
    heads = _apply_restores(entries, await _restore_rows(session), report)
    if not heads:
        if not entries:
            report.warnings.append(f"witness: {source} holds no entry for this chain yet")
        return report
    report.last_witnessed = max(h.position for h in heads)
    end = int(await session.scalar(select(func.coalesce(func.max(AuditEntry.id), 0))) or 0)
    head = await session.get(AuditChainHead, 1)
    head_says = head.last_id if head is not None else 0
    stored = await _macs(session, sorted({h.position for h in heads}))
    gone = [h for h in heads if stored.get(h.position) != h.mac]
    if not gone:
        return report
    last = max(gone, key=lambda h: (h.position, h.line_no))  # the latest it saw
    at = last.at.isoformat(timespec="seconds")
    differ = [h.position for h in gone if h.position in stored]
    if differ:
        first_diff = min(differ)
        agreed = max((h.position for h in heads if h not in gone and h.position < first_diff),
                     default=0)  # fmt: skip
        report.verdict = "ROLLED BACK"
        report.missing = (agreed + 1, last.position)
        report.headline = (
            f"audit log ROLLED BACK: witness saw position {last.position} at {at}; the "
            f"database's chain leaves the witnessed one after position {agreed} (by "
            f"{first_diff} at the latest): rows {span(agreed + 1, last.position)} as "
            "witnessed are missing, others stand in their place (an older backup put back "
            "or the tail rewritten)"
        )
    else:
        report.missing = (end + 1, last.position)
        count = last.position - end
        if head_says >= last.position:
            report.verdict = "TRUNCATED"
            report.headline = (
                f"audit log TRUNCATED: witness saw position {last.position} at {at}, the "
                f"database ends at {end} and its head still says {head_says} ({rows(count)} "
                f"missing: {span(end + 1, last.position)})"
            )
        else:
            report.verdict = "ROLLED BACK"
            report.headline = (
                f"audit log ROLLED BACK: witness saw position {last.position} at {at}, "
                f"database ends at {end} ({rows(count)} missing: {span(end + 1, last.position)})"
            )
    assert report.missing is not None
    report.findings.append(
        Finding(
            "audit_log",
            span(*report.missing),
            f"{report.verdict.lower()}: witnessed up to {last.position} at {at}, not in the "
            "database",
        )
    )
    return report


def read_witness(path: Path) -> tuple[str | None, str]:
    """The file's text (None when absent) and how to name it."""
    try:
        return path.read_text(encoding="ascii", errors="replace"), f"file {path}"
    except FileNotFoundError:
        return None, f"no witness file {path} yet"
    except OSError as exc:
        return None, f"cannot read witness file {path} ({exc.strerror})"
