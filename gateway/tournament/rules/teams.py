"""Team tournaments, a house format (docs/rules.md#h1 to #h9): pure rules, no database.

Theory of operation
-------------------
A team's score in a stage is made from the same individual standings every player sees
(H5): each member counts with their best single-entry score in that stage's standings
(:func:`member_scores`), so whatever those standings leave out — a disqualified player
or entry, a score played while on an exclusion register (T2, T20) — is left out of the
team too (H8).  The team's score is the sum of its members' scores, or the sum of the
``n`` best of them (H6, :class:`TeamScoring`).

Teams are ordered by their score, highest first.  Equal scores are compared by
countback (H7): the higher best counted score ranks higher, then the next, and so on; a
team whose counted scores run out first ranks lower.  Teams still equal share a place
and are flagged tied: no card is drawn for a team (T19 breaks ties between entries).
A team none of whose members has a score yet has no place (listed last, unranked).

**Advancement** (H10): with ``advance`` = N, the teams placed 1 to N in the qualifying
team standings go on (a place shared across the line goes on whole: every team sharing
a place at or above N); in the semi-final and final team standings only those teams are
placed, the others are listed last, unplaced, as out (:func:`advancing`,
:func:`rank_stage`).  Individual entries go on by their own results (T13–T17) either way.

Registration checks (H1–H4, H9) are here too, as functions of facts passed in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gateway.tournament.rules.violations import RuleViolation

__all__ = [
    "MAX_TEAM_SIZE",
    "TeamFacts",
    "TeamLine",
    "TeamScoring",
    "advancing",
    "check_members",
    "check_unlocked",
    "member_scores",
    "rank_stage",
    "rank_teams",
    "violation",
]

MAX_TEAM_SIZE = 12  # H4: the largest team a director may allow
SCORINGS = ("sum", "best-n")
MAX_ADVANCE = 500  # H10: the most teams a cut may send on


def violation(clause: str, message: str) -> RuleViolation:
    """A refusal naming a house clause (``rule H4: ...``)."""
    return RuleViolation(None, f"rule {clause}: {message}")


@dataclass(frozen=True, slots=True)
class TeamScoring:
    """H1, H4, H6: how a team's score is made and how big a team may be."""

    scoring: str = "sum"  # "sum" or "best-n"
    best_n: int | None = None
    min_size: int = 2
    max_size: int = 4
    advance: int | None = None  # H10: top N teams of the qualifying go on; None: no cut

    def __post_init__(self) -> None:
        if self.advance is not None and not 1 <= self.advance <= MAX_ADVANCE:
            raise violation("H10", f"advance: 1 to {MAX_ADVANCE} teams, got {self.advance}")
        if self.scoring not in SCORINGS:
            raise violation("H6", f"scoring: 'sum' or 'best-n', got {self.scoring!r}")
        if self.scoring == "best-n" and (self.best_n is None or self.best_n < 1):
            raise violation("H6", "best-n: give n, at least 1")
        if self.scoring == "sum" and self.best_n is not None:
            raise violation("H6", "best-n: n goes with scoring 'best-n' only")
        if not 1 <= self.min_size <= self.max_size <= MAX_TEAM_SIZE:
            raise violation(
                "H4",
                f"team size: need 1 <= min ({self.min_size}) <= max ({self.max_size})"
                f" <= {MAX_TEAM_SIZE}",
            )
        if self.best_n is not None and self.best_n > self.max_size:
            raise violation("H6", f"best-n: n ({self.best_n}) exceeds the largest team")

    def counted(self, scores: Iterable[int]) -> tuple[int, ...]:
        """The member scores that make the team's score (H6), best first."""
        ordered = tuple(sorted(scores, reverse=True))
        return ordered if self.best_n is None else ordered[: self.best_n]


@dataclass(frozen=True, slots=True)
class TeamFacts:
    team_id: int
    name: str
    members: tuple[int, ...]  # player ids


@dataclass(frozen=True, slots=True)
class TeamLine:
    place: int | None  # None: no member has a score in the stage yet
    position: int  # listing order (inside a tie: by name)
    team_id: int
    name: str
    total: int
    counted: tuple[tuple[int, int], ...]  # (player id, score) that count, best first (H6)
    scores: Mapping[int, int | None]  # every member's score, None = none (H5, H8)
    tied: bool
    out: bool = False  # H10: not through the qualifying cut, so unplaced in a later stage


def member_scores(lines: Iterable[tuple[int, int]]) -> dict[int, int]:
    """H5: each player's best single-entry score among the stage's standing lines
    ``(player id, credits)`` (lines already without what T2/T20 leave out)."""
    best: dict[int, int] = {}
    for player_id, credits in lines:
        if credits > best.get(player_id, -1):
            best[player_id] = credits
    return best


def rank_teams(
    teams: Iterable[TeamFacts], best: Mapping[int, int], scoring: TeamScoring
) -> tuple[TeamLine, ...]:
    """H6–H8: every team, ranked by its score with countback; unscored teams last."""
    scored: list[tuple[tuple[int, ...], TeamFacts, tuple[tuple[int, int], ...]]] = []
    unscored: list[TeamFacts] = []
    for team in teams:
        present = [(p, best[p]) for p in team.members if p in best]
        if not present:
            unscored.append(team)
            continue
        values = scoring.counted(c for _, c in present)
        by_score = sorted(present, key=lambda pc: (-pc[1], pc[0]))[: len(values)]
        scored.append((values, team, tuple(by_score)))
    scored.sort(key=lambda s: (_key(s[0]), s[1].name, s[1].team_id))
    shared = Counter(_key(values) for values, _, _ in scored)
    out: list[TeamLine] = []
    place = 0
    for i, (values, team, counted) in enumerate(scored):
        key = _key(values)
        if i == 0 or key != _key(scored[i - 1][0]):
            place = i + 1
        tied = shared[key] > 1
        out.append(
            TeamLine(
                place, i + 1, team.team_id, team.name, sum(values), counted,
                {p: best.get(p) for p in team.members}, tied,
            )
        )  # fmt: skip
    for k, team in enumerate(sorted(unscored, key=lambda t: (t.name, t.team_id))):
        out.append(
            TeamLine(
                None, len(scored) + k + 1, team.team_id, team.name, 0, (),
                {p: None for p in team.members}, False,
            )
        )  # fmt: skip
    return tuple(out)


def advancing(lines: Iterable[TeamLine], advance: int | None) -> frozenset[int] | None:
    """H10: the teams through the cut of ``advance`` from qualifying team standings
    ``lines`` (a shared place at or above the line goes on whole); None: no cut."""
    if advance is None:
        return None
    return frozenset(x.team_id for x in lines if x.place is not None and x.place <= advance)


def rank_stage(
    teams: Iterable[TeamFacts],
    best: Mapping[int, int],
    scoring: TeamScoring,
    through: frozenset[int] | None,
) -> tuple[TeamLine, ...]:
    """H6–H8, H10: a stage's team standings; with ``through`` (a later stage under a
    cut) only the teams through are placed, the others listed last as out."""
    facts = list(teams)
    if through is None:
        return rank_teams(facts, best, scoring)
    placed = rank_teams((t for t in facts if t.team_id in through), best, scoring)
    rest = sorted((t for t in facts if t.team_id not in through), key=lambda t: (t.name, t.team_id))
    return placed + tuple(
        TeamLine(
            None, len(placed) + k + 1, t.team_id, t.name, 0, (),
            {p: best.get(p) for p in t.members}, False, out=True,
        )
        for k, t in enumerate(rest)
    )  # fmt: skip


def _key(values: Sequence[int]) -> tuple[int, tuple[int, ...]]:
    """Sort key, best first: the total (H6), then countback (H7).  A countback tuple
    that is a prefix of another ranks lower: compared negated, a longer tuple of the
    same prefix sorts first."""
    return (-sum(values), (*(-v for v in values), 1))


def check_members(
    scoring: TeamScoring,
    members: Sequence[int],
    captain: int,
    holders: Iterable[int],
    in_teams: Mapping[int, str],
) -> None:
    """H2–H4: a new team's members.  ``holders``: players with an entry in the
    tournament; ``in_teams``: players already in a team of it, with the team's name."""
    if len(set(members)) != len(members):
        raise violation("H2", "members: a player is named twice")
    if not scoring.min_size <= len(members) <= scoring.max_size:
        raise violation(
            "H4",
            f"members: a team has {scoring.min_size} to {scoring.max_size} players,"
            f" got {len(members)}",
        )
    if captain not in members:
        raise violation("H3", f"captain: player {captain} is not one of the members")
    holding = set(holders)
    for player in members:
        if player not in holding:
            raise violation("H2", f"members: player {player} holds no entry in this tournament")
        if player in in_teams:
            raise violation(
                "H2", f"members: player {player} is already in team {in_teams[player]!r}"
            )


def check_unlocked(what: str, played: Iterable[int]) -> None:
    """H9: nothing about a team changes once one of its (or the joining) players has
    played in the tournament; ``played`` are those players."""
    who = sorted(set(played))
    if who:
        raise violation(
            "H9",
            f"{what}: player {who[0]} has already played in this tournament;"
            " a team is fixed once a member has played",
        )
