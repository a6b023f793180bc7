"""Hot-seat draws and wild cards by commit-reveal (house clauses HS1–HS7, docs/rules.md).

Pure: bytes, integers and strings in, frozen values out; no clock, no database.  Anyone
holding the revealed seed recomputes every draw (``tools/verify_export.py`` does, from a
signed export, with the standard library alone).  The algorithm, version ``hotseat/1``:

* **Subject.**  What a seed is for: ``f"heat:{heat_id}"`` for a heat's hot-seat draws,
  ``f"wildcard:{tournament_id}:{stage}"`` for the wild card out of a tournament's stage.
* **Commitment** (HS4): ``SHA-256(b"reelgate-hotseat/1\\n" + subject + b"\\n" + seed)``,
  lower-case hex.  The seed is 32 bytes from ``secrets``; the commitment is published
  before the heat starts, the seed after it closes (HS5).
* **uniform(seed, context, n)**: the tie-break draw's unbiased integer in ``[0, n)``
  (``gateway/tournament/rules/cards.py``): ``HMAC-SHA256(key=seed,
  msg=f"{context}|{counter}")`` as a big-endian integer, rejecting values at or above
  ``2**256 - 2**256 % n``.
* **Moments** (HS2): a heat of ``D`` whole seconds (``end - start``) with ``N`` draws is cut
  into ``N`` slots, slot ``i`` being ``[i*D//N, (i+1)*D//N)``; draw ``i`` falls at
  ``start + i*D//N + uniform(seed, f"{subject}|moment|{i}", slot length)``.  Every moment
  is inside the heat, the moments rise strictly, and one falls in each slot.
* **Winner** (HS1, HS3): the candidates are every seat (or entry) of the subject, as text,
  sorted; attempt ``k`` picks ``remaining[uniform(seed, f"{subject}|winner|{i}|{k}",
  len(remaining))]`` where ``remaining`` is the sorted candidates less the seats already
  drawn and found ineligible at that draw; the first eligible pick wins.  A draw with no
  eligible candidate is void (no winner, no prize).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from gateway.tournament.rules.cards import uniform
from gateway.tournament.rules.violations import RuleViolation

ALGORITHM = "hotseat/1"
SEED_BYTES = 32
MAX_DRAWS = 20


def heat_subject(heat_id: int) -> str:
    return f"heat:{heat_id}"


def wildcard_subject(tournament_id: int, stage: str) -> str:
    return f"wildcard:{tournament_id}:{stage}"


def commitment(seed: bytes, subject: str) -> str:
    """The published hash of a seed for ``subject`` (HS4)."""
    return hashlib.sha256(b"reelgate-hotseat/1\n" + subject.encode() + b"\n" + seed).hexdigest()


def check_reveal(seed: bytes, subject: str, committed: str) -> None:
    """Refuse a seed that is not the one committed for ``subject`` (HS5)."""
    if commitment(seed, subject) != committed:
        raise RuleViolation(None, f"HS5: the seed does not match the commitment {committed}")


def draw_moments(
    seed: bytes, subject: str, start: datetime, end: datetime, draws: int
) -> list[datetime]:
    """The ``draws`` moments of a heat from ``start`` to ``end`` (HS2), rising, inside it."""
    if not 1 <= draws <= MAX_DRAWS:
        raise RuleViolation(None, f"HS2: draws must be 1 to {MAX_DRAWS}, not {draws}")
    seconds = int((end - start).total_seconds())
    if seconds < draws:
        raise RuleViolation(
            None, f"HS2: a heat of {seconds} s cannot hold {draws} draws (one per second at most)"
        )
    moments = []
    for i in range(draws):
        low, high = i * seconds // draws, (i + 1) * seconds // draws
        offset = low + uniform(seed, f"{subject}|moment|{i}", high - low)
        moments.append(start + timedelta(seconds=offset))
    return moments


@dataclass(frozen=True)
class DrawOutcome:
    """One draw: the candidates it drew from, each pick in order, and the winner (HS3)."""

    index: int
    candidates: tuple[str, ...]
    picks: tuple[str, ...]
    winner: str | None


def draw_winner(
    seed: bytes, subject: str, index: int, candidates: Collection[str], ineligible: Collection[str]
) -> DrawOutcome:
    """Draw ``index``: the first eligible pick among ``candidates`` (HS1, HS3)."""
    ordered = tuple(sorted(set(candidates)))
    remaining = list(ordered)
    picks: list[str] = []
    bad = set(ineligible)
    attempt = 0
    while remaining:
        pick = remaining[uniform(seed, f"{subject}|winner|{index}|{attempt}", len(remaining))]
        picks.append(pick)
        if pick not in bad:
            return DrawOutcome(index, ordered, tuple(picks), pick)
        remaining.remove(pick)
        attempt += 1
    return DrawOutcome(index, ordered, tuple(picks), None)


def draw_all(
    seed: bytes,
    subject: str,
    candidates: Collection[str],
    ineligible_by_draw: Sequence[Collection[str]],
) -> list[DrawOutcome]:
    """Every draw of a subject: ``ineligible_by_draw[i]`` is who could not win draw ``i``."""
    return [
        draw_winner(seed, subject, i, candidates, bad) for i, bad in enumerate(ineligible_by_draw)
    ]


def export_entry(
    *,
    subject: str,
    committed: str,
    seed: bytes | None,
    start: datetime | None,
    end: datetime | None,
    draws: int,
    prize_cents: int,
    taken: Sequence[tuple[datetime | None, DrawOutcome, Collection[str]]],
) -> dict[str, object]:
    """One subject's draws as the signed exports carry them (``body["hotseat"]``, HS5).

    ``taken`` is each draw taken: its moment (``None`` for a wild card), its outcome and
    the candidates that could not win it.  ``seed`` is ``None`` until it is revealed.
    """
    return {
        "algorithm": ALGORITHM,
        "subject": subject,
        "commitment": committed,
        "seed": None if seed is None else seed.hex(),
        "start": start,
        "end": end,
        "draws": draws,
        "prize_cents": prize_cents,
        "draws_taken": [
            {
                "index": outcome.index,
                "moment": moment,
                "candidates": list(outcome.candidates),
                "ineligible": sorted(set(bad) & set(outcome.candidates)),
                "picks": list(outcome.picks),
                "winner": outcome.winner,
            }
            for moment, outcome, bad in taken
        ],
    }
