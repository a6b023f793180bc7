"""The judgements a heat makes from facts, in one place, so the same facts get the same
decision wherever they are found (while arming, while playing, during a recovery).

* :func:`is_system_failure` — more than half of a heat's machines silent at once is a
  tournament-system failure (T20: the entire heat restarts), not a run of machine
  malfunctions (T20/T21 per seat, the heat goes on).
* :func:`unproven_seats` — a heat resumed past its end stands only on each machine's own
  record that it played: its unlock acknowledged (journaled after the start), or games
  on its tournament meters.  Policy: if no machine in play has such proof, the heat
  never started on the floor and is restarted (T20); a machine without proof among
  machines with proof never started its heat — a malfunction of that seat (T20: a future
  seat or a refund), and the heat stands for the others.  A machine that played only part
  of the heat (proof of play, then silent) is scored from its meters when they can be
  read, else it is a malfunction — as for a machine that fails mid-heat.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence


def is_system_failure(silent: Collection[str], machines: Collection[str]) -> bool:
    """T20: more than half of the heat's machines silent together."""
    considered = set(machines)
    return bool(considered) and len(set(silent) & considered) * 2 > len(considered)


def unproven_seats(
    in_play: Sequence[str], unlocked: Collection[str], games_played: Mapping[str, int]
) -> list[str]:
    """Machines in play with no proof that they played the heat (see the module)."""
    return [m for m in in_play if m not in unlocked and games_played.get(m, 0) <= 0]
