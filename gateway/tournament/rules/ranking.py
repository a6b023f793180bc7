"""Single-entry ranking, tie groups and qualification cuts (rules 12–14, 17, 19).

Theory of operation
-------------------
Every score belongs to one entry (rule 12), so the ranking is of entries, not players:
a player with three good entries may hold three places, and then three seats in the
final stages (rule 16 lets them nominate proxies).  Entries of disqualified players
(rule 2, rule 20 negligence) are left out before ranking.

Entries are ordered by credits, highest first.  Equal credits are a tie, and a tie is
broken **only** by recorded card draws (rule 19): in round 1 every tied entry has a card;
higher value ranks higher; entries with equal values form a smaller tie that is broken by
round 2 among themselves only, and so on.  Where draws are missing the entries stay
tied: they share a place and are reported as an unresolved :class:`TieGroup` with the
round that has to be drawn next.  A draw is bound to the score it broke: if a director
later corrects a score, draws recorded for the old score no longer apply.

Cuts: the top ``k`` qualify.  A tie that straddles the cut (some of its entries inside,
some outside) must be drawn before the cut is final; until then the entries of that
group are reported as pending, never guessed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from gateway.tournament.rules.cards import Card
from gateway.tournament.rules.violations import RuleViolation

# One tie group and one round-by-round tie break for both rankings: this pure one and the
# SQL one in storage (rule 19), so the two can never disagree on a draw.
from storage.ranking import TieGroup, resolve_tie

__all__ = [
    "CutOutcome",
    "QualifyingOutcome",
    "RankedLine",
    "ScoreLine",
    "Standings",
    "TieDraw",
    "TieGroup",
    "check_draw_round",
    "prize_order",
    "qualify_finalists",
    "qualify_from_qualifying",
    "rank",
]


@dataclass(frozen=True, slots=True)
class ScoreLine:
    entry_id: int
    player_id: int
    credits: int


@dataclass(frozen=True, slots=True)
class TieDraw:
    """One recorded card for one entry in one round of breaking a tie at ``credits``."""

    entry_id: int
    credits: int
    round: int
    value: int  # 1 (Ace) .. 13 (King)


@dataclass(frozen=True, slots=True)
class RankedLine:
    position: int  # 1-based row in the listing (display order only inside a tie)
    place: int  # competition place: equal for entries still tied
    entry_id: int
    player_id: int
    credits: int
    tied: bool  # shares its place with an unresolved tie


@dataclass(frozen=True, slots=True)
class Standings:
    lines: tuple[RankedLine, ...]
    ties: tuple[TieGroup, ...]

    def tie_straddling(self, cut: int) -> TieGroup | None:
        for tie in self.ties:
            if tie.straddles(cut):
                return tie
        return None

    def top(self, cut: int) -> tuple[tuple[int, ...], TieGroup | None]:
        """Entry ids certainly in the top ``cut`` (rank order), and the tie blocking the rest."""
        blocking = self.tie_straddling(cut)
        inside = tuple(
            line.entry_id
            for line in self.lines
            if line.place <= cut and (blocking is None or line.entry_id not in blocking.entry_ids)
        )
        return inside, blocking


def rank(
    scores: Iterable[ScoreLine],
    draws: Iterable[TieDraw] = (),
    disqualified_players: Collection[int] = (),
    disqualified_entries: Collection[int] = (),
) -> Standings:
    by_credits: dict[int, list[ScoreLine]] = defaultdict(list)
    seen: set[int] = set()
    for line in scores:
        if line.entry_id in seen:
            raise RuleViolation(12, f"entry {line.entry_id} has two scores in one ranking")
        seen.add(line.entry_id)
        if line.credits < 0:
            raise RuleViolation(12, f"entry {line.entry_id} has negative credits")
        out = line.player_id in disqualified_players or line.entry_id in disqualified_entries
        if not out:  # rule 2: a disqualified player drops out of every ranking
            by_credits[line.credits].append(line)
    cards: dict[tuple[int, int, int], int] = {
        (d.entry_id, d.credits, d.round): d.value for d in draws
    }
    lines: list[RankedLine] = []
    ties: list[TieGroup] = []
    for credits in sorted(by_credits, reverse=True):
        group = {line.entry_id: line for line in by_credits[credits]}
        for bucket, next_round in resolve_tie(sorted(group), credits, 1, cards):
            place = len(lines) + 1
            if len(bucket) > 1:
                ties.append(TieGroup(place, credits, tuple(bucket), next_round))
            for entry_id in bucket:
                line = group[entry_id]
                lines.append(
                    RankedLine(
                        len(lines) + 1, place, entry_id, line.player_id, credits, len(bucket) > 1
                    )
                )
    return Standings(tuple(lines), tuple(ties))


def check_draw_round(tie: TieGroup, cards: Mapping[int, Card]) -> None:
    """Rule 19: a draw round is for exactly the entries still tied, one card each."""
    wanted, given = set(tie.entry_ids), set(cards)
    if wanted != given:
        missing = sorted(wanted - given)
        extra = sorted(given - wanted)
        what = f"missing entries {missing}" if missing else f"entries {extra} are not in this tie"
        raise RuleViolation(19, f"round {tie.next_round} at {tie.credits} credits: {what}")


@dataclass(frozen=True, slots=True)
class QualifyingOutcome:
    """Rules 13–14: the top single entry goes to the final; the next N to the semi-finals."""

    direct_finalists: tuple[int, ...]
    semi_finalists: tuple[int, ...]
    pending: tuple[TieGroup, ...]

    @property
    def complete(self) -> bool:
        return not self.pending


def qualify_from_qualifying(
    standings: Standings, semi_final_places: int, direct_places: int = 1
) -> QualifyingOutcome:
    """Rule 13: the top ``direct_places`` (1) entries; rule 14: the next ``semi_final_places``.

    A tie straddling either cut leaves its entries out of both lists and in ``pending``
    until it is drawn (rule 19); nothing is guessed.
    """
    direct, direct_tie = standings.top(direct_places)
    field_, field_tie = standings.top(direct_places + semi_final_places)
    pending = tuple(dict.fromkeys(t for t in (direct_tie, field_tie) if t is not None))
    held = set(direct) | (set(direct_tie.entry_ids) if direct_tie else set())
    semis = tuple(e for e in field_ if e not in held)
    return QualifyingOutcome(direct, semis, pending)


@dataclass(frozen=True, slots=True)
class CutOutcome:
    selected: tuple[int, ...]
    pending: tuple[TieGroup, ...]

    @property
    def complete(self) -> bool:
        return not self.pending


def qualify_finalists(standings: Standings, quota: int) -> CutOutcome:
    """Rule 17: the top ``quota`` of the semi-final ranking, highest first."""
    selected, tie = standings.top(quota)
    return CutOutcome(selected, (tie,) if tie else ())


def prize_order(standings: Standings, prize_places: int) -> CutOutcome:
    """Rule 19 "when determining winners": each prize place needs a strict order."""
    pending = tuple(t for t in standings.ties if t.place <= prize_places)
    selected = tuple(
        line.entry_id for line in standings.lines if line.place <= prize_places and not line.tied
    )
    return CutOutcome(selected, pending)
