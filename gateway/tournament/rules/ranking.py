"""Single-entry ranking, tie groups and qualification cuts (T12–T14, T17, T19).

Theory of operation
-------------------
Every score belongs to one entry (T12), so the ranking is of entries, not players:
a player with three good entries may hold three places, and then three seats in the
final stages (T16 lets them nominate proxies).  Entries of disqualified players
(T2, T20 negligence) are left out before ranking.

Entries are ordered by credits, highest first.  Equal credits are a tie, and a tie is
broken **only** by recorded card draws (T19): in round 1 every tied entry has a card;
higher value ranks higher; entries with equal values form a smaller tie that is broken by
round 2 among themselves only, and so on.  Where draws are missing the entries stay
tied: they share a place and are reported as an unresolved :class:`TieGroup` with the
round that has to be drawn next.  A draw is bound to the score it broke: if a director
later corrects a score, draws recorded for the old score no longer apply.

The same tie break orders the live top N that storage reads with SQL window functions
(:mod:`gateway.tournament.services.live_standings`): :func:`placed_buckets` is the one
T19 core of both, so the two rankings can never disagree on a draw.

A heat's own result on the signs (:func:`heat_places`) breaks nothing: equal credits
share a rank and are flagged, because only a card draw breaks a tie.

Cuts: the top ``k`` qualify.  A tie that straddles the cut (some of its entries inside,
some outside) must be drawn before the cut is final; until then the entries of that
group are reported as pending, never guessed.

Clauses: docs/rules.md#t12 to #t14, #t17, #t19.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass

from gateway.tournament.rules.cards import Card
from gateway.tournament.rules.violations import RuleViolation

# (entry id, tied credits, round) -> card value, Ace 1 .. King 13 (T19).
Cards = Mapping[tuple[int, int, int], int]

__all__ = [
    "Cards",
    "CutOutcome",
    "HeatPlace",
    "QualifyingOutcome",
    "RankedLine",
    "ScoreLine",
    "Standings",
    "TieDraw",
    "TieGroup",
    "check_draw_round",
    "heat_places",
    "placed_buckets",
    "prize_order",
    "qualify_finalists",
    "qualify_from_qualifying",
    "rank",
    "resolve_tie",
]


@dataclass(frozen=True, slots=True)
class TieGroup:
    """Entries still tied: ``place`` is their shared place, ``next_round`` the round to draw."""

    place: int
    credits: int
    entry_ids: tuple[int, ...]
    next_round: int

    @property
    def last_place(self) -> int:
        return self.place + len(self.entry_ids) - 1

    def straddles(self, cut: int) -> bool:
        """True when the top ``cut`` places take some but not all of this group."""
        return self.place <= cut < self.last_place


def resolve_tie(
    members: list[int], credits: int, round_number: int, cards: Cards
) -> list[tuple[list[int], int]]:
    """Order tied entries by their cards (T19): [(bucket, next round)], best first.

    A round counts only when every entry still tied has its card; equal cards go to the
    next round among themselves."""
    if len(members) == 1:
        return [(members, round_number)]
    values = {m: cards.get((m, credits, round_number)) for m in members}
    if any(v is None for v in values.values()):
        return [(members, round_number)]  # round not (fully) drawn: still tied
    buckets: dict[int, list[int]] = defaultdict(list)
    for member in members:
        buckets[values[member] or 0].append(member)
    out: list[tuple[list[int], int]] = []
    for value in sorted(buckets, reverse=True):  # highest card wins, Ace low
        out.extend(resolve_tie(buckets[value], credits, round_number + 1, cards))
    return out


def placed_buckets(
    entry_ids: Iterable[int], credits: int, first_place: int, cards: Cards
) -> Iterator[tuple[int, tuple[int, ...], TieGroup | None]]:
    """The entries on ``credits``, whose best place is ``first_place``, in draw order
    (T19): (place, the entries sharing it, their unresolved tie or None), best first."""
    place = first_place
    for bucket, next_round in resolve_tie(sorted(entry_ids), credits, 1, cards):
        entries = tuple(bucket)
        tie = TieGroup(place, credits, entries, next_round) if len(entries) > 1 else None
        yield place, entries, tie
        place += len(entries)


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
        if not out:  # T2: a disqualified player drops out of every ranking
            by_credits[line.credits].append(line)
    cards: dict[tuple[int, int, int], int] = {
        (d.entry_id, d.credits, d.round): d.value for d in draws
    }
    lines: list[RankedLine] = []
    ties: list[TieGroup] = []
    for credits in sorted(by_credits, reverse=True):
        group = {line.entry_id: line for line in by_credits[credits]}
        for place, bucket, tie in placed_buckets(group, credits, len(lines) + 1, cards):
            if tie is not None:
                ties.append(tie)
            for entry_id in bucket:
                line = group[entry_id]
                lines.append(
                    RankedLine(
                        len(lines) + 1, place, entry_id, line.player_id, credits, tie is not None
                    )
                )
    return Standings(tuple(lines), tuple(ties))


def check_draw_round(tie: TieGroup, cards: Mapping[int, Card]) -> None:
    """T19: a draw round is for exactly the entries still tied, one card each."""
    wanted, given = set(tie.entry_ids), set(cards)
    if wanted != given:
        missing = sorted(wanted - given)
        extra = sorted(given - wanted)
        what = f"missing entries {missing}" if missing else f"entries {extra} are not in this tie"
        raise RuleViolation(19, f"round {tie.next_round} at {tie.credits} credits: {what}")


@dataclass(frozen=True, slots=True)
class QualifyingOutcome:
    """T13–T14: the top single entry goes to the final; the next N to the semi-finals.

    ``cut_places`` are the places after which the two cut lines fall (after the direct
    final places, and after the last place the semi-final cut reaches once it has
    widened past ``barred`` entries); ``barred`` are the top qualifier's other entries
    that T14a keeps out (``top_player_excluded``).  Boards, the console, the standings
    and seating all read these, so a line above the cut is a seat."""

    direct_finalists: tuple[int, ...]
    semi_finalists: tuple[int, ...]
    pending: tuple[TieGroup, ...]
    barred: tuple[int, ...] = ()
    cut_places: tuple[int, int] = (0, 0)

    @property
    def complete(self) -> bool:
        return not self.pending

    def verdict(self, entry_id: int) -> str | None:
        """Where an entry stands: ``final`` (T13), ``semi-final`` (T14), ``excluded``
        (T14a: the top qualifier's other entry), ``tie`` (T19: a draw decides) or None."""
        if entry_id in self.direct_finalists:
            return "final"
        if entry_id in self.semi_finalists:
            return "semi-final"
        if entry_id in self.barred:
            return "excluded"
        if any(entry_id in t.entry_ids for t in self.pending):
            return "tie"
        return None


def qualify_from_qualifying(
    standings: Standings,
    semi_final_places: int,
    direct_places: int = 1,
    *,
    top_player_excluded: bool = True,
) -> QualifyingOutcome:
    """T13: the top ``direct_places`` (1) entries; T14: the next ``semi_final_places``.

    T14 excludes "the participant who obtained the highest credit score", so by
    default (``top_player_excluded``) that player's other entries take no semi-final seat
    and the seats go further down the ranking; with it off only the top entry is left out.

    A tie straddling either cut leaves its entries out of both lists and in ``pending``
    until it is drawn (T19); nothing is guessed.
    """
    direct, direct_tie = standings.top(direct_places)
    barred: set[int] = set()
    if top_player_excluded:
        top_players = {line.player_id for line in standings.lines if line.entry_id in direct}
        barred = {
            line.entry_id
            for line in standings.lines
            if line.player_id in top_players and line.entry_id not in direct
        }
    cut = direct_places + semi_final_places
    for _ in range(len(standings.lines) + 1):  # widen past barred entries until stable
        wider = direct_places + semi_final_places
        wider += sum(1 for line in standings.lines if line.entry_id in barred and line.place <= cut)
        if wider == cut:
            break
        cut = wider
    field_, field_tie = standings.top(cut)
    pending = tuple(dict.fromkeys(t for t in (direct_tie, field_tie) if t is not None))
    held = set(direct) | (set(direct_tie.entry_ids) if direct_tie else set()) | barred
    semis = tuple(e for e in field_ if e not in held)
    shown = tuple(line.entry_id for line in standings.lines if line.entry_id in barred)
    return QualifyingOutcome(direct, semis, pending, shown, (direct_places, cut))


@dataclass(frozen=True, slots=True)
class CutOutcome:
    selected: tuple[int, ...]
    pending: tuple[TieGroup, ...]

    @property
    def complete(self) -> bool:
        return not self.pending


def qualify_finalists(standings: Standings, quota: int) -> CutOutcome:
    """T17: the top ``quota`` of the semi-final ranking, highest first."""
    selected, tie = standings.top(quota)
    return CutOutcome(selected, (tie,) if tie else ())


def prize_order(standings: Standings, prize_places: int) -> CutOutcome:
    """T19 "when determining winners": each prize place needs a strict order."""
    pending = tuple(t for t in standings.ties if t.place <= prize_places)
    selected = tuple(
        line.entry_id for line in standings.lines if line.place <= prize_places and not line.tied
    )
    return CutOutcome(selected, pending)


@dataclass(frozen=True, slots=True)
class HeatPlace:
    """One machine's line in a heat's own result, as the signs show it."""

    rank: int  # competition rank: equal credits share it
    machine_id: str
    credits: int
    tie: bool  # equal credits with another machine: T19 breaks it by a card draw


def heat_places(credits: Mapping[str, int], left_out: Collection[str] = ()) -> list[HeatPlace]:
    """Rank a heat's machines by credits, highest first (T12–T14), machine id inside a
    tie for a stable listing.  Equal credits share a rank and are flagged ``tie``: T19
    breaks ties by a card draw, never by the system.  ``left_out``: machines not ranked
    (T20 malfunctions)."""
    rows = sorted(
        ((m, c) for m, c in credits.items() if m not in left_out),
        key=lambda mc: (-mc[1], mc[0]),
    )
    counts: dict[int, int] = defaultdict(int)
    for _, c in rows:
        counts[c] += 1
    out: list[HeatPlace] = []
    for position, (machine_id, value) in enumerate(rows, start=1):
        shared = bool(out) and out[-1].credits == value
        rank_ = out[-1].rank if shared else position
        out.append(HeatPlace(rank_, machine_id, value, counts[value] > 1))
    return out
