"""Hot-seat draws and wild cards over storage (house clauses HS1–HS7, docs/rules.md).

The draw itself is :mod:`gateway.tournament.rules.hotseat`; here it meets the tables.

* :func:`commit_heat` / :func:`commit_wildcard` draw a 32-byte seed with :mod:`secrets`,
  keep it, and publish (audit, boards, API) only its commitment (HS4).  A heat that has
  started cannot be committed; a stage that is over cannot get a wild card.
* :func:`take_live_draw` takes one draw while the heat runs, once its moment (from the
  seed and the heat's recorded start) has come: the seats eligible at that moment
  (HS1, HS3); the winner is announced, the seed stays secret.  The running gateway
  calls it as the moments fall (:func:`due_live_draws`, ``gateway/app/live_draws.py``).
* :func:`take_heat_draws` takes what is left of a closed heat's draws (a moment missed
  with the gateway down, or no gateway running) from the recorded facts, each seat's
  eligibility its status as the heat closed, and reveals the seed (HS5).
* :func:`draw_wildcard` draws one entry that did not qualify out of an over stage (HS6).
* :func:`pay_draw` pays a won draw's prize to the winning entry's player, who signs for
  it, with a witness (HS7; the API runs it under dual control).

Every change is audited in the same transaction; the seed only once revealed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.hotseat import (
    MAX_DRAWS,
    SEED_BYTES,
    DrawOutcome,
    commitment,
    draw_moments,
    draw_winner,
    export_entry,
    heat_subject,
    wildcard_subject,
)
from gateway.tournament.rules.player_ref import PlayerNotFound
from gateway.tournament.rules.prizes import Winner, check_receipt
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import aware, find_tournament, get, record, require_actor
from gateway.tournament.services.lookup import player_by_ref
from gateway.tournament.services.people import disqualified_sets
from gateway.tournament.services.prizes import refuse_while_journaled
from gateway.tournament.services.standings import qualifiers, stage_over, stage_standings
from storage import change_feed
from storage.audit import require_keys
from storage.enums import HeatStatus, SeatStatus
from storage.hotseat import HotseatCommitment, HotseatDraw
from storage.tournament import Entry, Heat, Player, Seat

NOT_STARTED = (HeatStatus.SCHEDULED, HeatStatus.ARMED)
LIVE = (HeatStatus.RUNNING, HeatStatus.ENDING)  # HS3: a draw is taken live while it plays
PLAYING = (SeatStatus.PRESENT, SeatStatus.PLAYED)  # HS1: present and playing at the close


def seat_label(seat_number: int) -> str:
    """A seat as the draw names it: zero-padded, so text order is seat order."""
    return f"{seat_number:03d}"


def _refuse(clause: str, message: str) -> RuleViolation:
    return RuleViolation(None, f"{clause}: {message}")


def _check_terms(draws: int, prize_cents: int) -> None:
    if not 1 <= draws <= MAX_DRAWS:
        raise _refuse("HS2", f"draws must be 1 to {MAX_DRAWS}, not {draws}")
    if prize_cents < 0:
        raise _refuse("HS2", f"prize_cents must not be negative, not {prize_cents}")


async def _commitment(session: AsyncSession, subject: str) -> HotseatCommitment | None:
    return await session.scalar(
        select(HotseatCommitment).where(HotseatCommitment.subject == subject)
    )


async def _new_commitment(
    session: AsyncSession,
    *,
    subject: str,
    tournament_id: int,
    stage: Stage,
    heat_id: int | None,
    draws: int,
    prize_cents: int,
    actor: str,
    now: datetime,
) -> HotseatCommitment:
    if await _commitment(session, subject) is not None:
        raise _refuse("HS4", f"{subject} is already committed; a seed is committed once")
    nonce = secrets.token_bytes(SEED_BYTES)
    seed = keyed_seed(session, nonce, subject)
    row = HotseatCommitment(
        subject=subject,
        tournament_id=tournament_id,
        stage=stage,
        heat_id=heat_id,
        draws=draws,
        prize_cents=prize_cents,
        nonce_hex=nonce.hex(),
        seed_hex=None,  # HS5: stored when revealed
        commitment=commitment(seed, subject),
        committed_by=actor,
        committed_at=now,
    )
    session.add(row)
    await session.flush()
    await record(
        session,
        actor,
        "hotseat.commit",
        subject,
        None,
        commitment=row.commitment,
        draws=draws,
        prize_cents=prize_cents,
        algorithm="hotseat/1",
        rule="HS4",
    )  # never the seed (HS5)
    return row


SEED_LABEL = b"reelgate-hotseat-seed/1|"


def keyed_seed(session: AsyncSession, nonce: bytes, subject: str) -> bytes:
    """The draw's seed: HMAC-SHA256 of the nonce and subject under the venue's audit key,
    which the database never holds (docs/records.md) — an insider who reads the stored
    nonce cannot compute the seed, hence the draw, before the reveal (HS5)."""
    key = require_keys(session).mac_key
    return hmac.new(key, SEED_LABEL + subject.encode() + b"|" + nonce, hashlib.sha256).digest()


def _seed_of(session: AsyncSession, row: HotseatCommitment) -> bytes:
    seed = keyed_seed(session, bytes.fromhex(row.nonce_hex), row.subject)
    if commitment(seed, row.subject) != row.commitment:  # another key, or an edited row
        raise _refuse(
            "HS5",
            f"{row.subject}: the seed does not match its commitment (audit key or row changed)",
        )
    return seed


async def commit_heat(
    session: AsyncSession,
    heat_id: int,
    *,
    draws: int,
    prize_cents: int,
    actor: str,
    now: datetime,
) -> HotseatCommitment:
    """Commit a heat's hot-seat draws before it starts (HS2, HS4)."""
    actor = require_actor(actor)
    aware(now, "now")
    _check_terms(draws, prize_cents)
    heat = await get(session, Heat, heat_id, "heat")
    if heat.status not in NOT_STARTED:
        raise _refuse("HS4", f"heat {heat.id} is {heat.status.value}: commit before it starts")
    if heat.duration_seconds < draws:
        raise _refuse("HS2", f"a heat of {heat.duration_seconds} s cannot hold {draws} draws")
    return await _new_commitment(
        session,
        subject=heat_subject(heat.id),
        tournament_id=heat.tournament_id,
        stage=heat.stage,
        heat_id=heat.id,
        draws=draws,
        prize_cents=prize_cents,
        actor=actor,
        now=now,
    )


async def commit_wildcard(
    session: AsyncSession, tournament_ref: int | str, stage: Stage, *, actor: str, now: datetime
) -> HotseatCommitment:
    """Commit a stage's wild card before the stage is over (HS4, HS6)."""
    actor = require_actor(actor)
    aware(now, "now")
    tournament = await find_tournament(session, tournament_ref)
    if stage is Stage.FINAL:
        raise _refuse("HS6", "stage: the final has no next stage to go through to")
    if await stage_over(session, tournament.id, stage):
        raise _refuse("HS4", f"the {stage.value} is over: commit a wild card before it ends")
    return await _new_commitment(
        session,
        subject=wildcard_subject(tournament.id, stage.value),
        tournament_id=tournament.id,
        stage=stage,
        heat_id=None,
        draws=1,
        prize_cents=0,
        actor=actor,
        now=now,
    )


def _draw_row(
    row: HotseatCommitment,
    moment: datetime | None,
    outcome: DrawOutcome,
    bad: list[str],
    entry_id: int | None,
    actor: str,
    now: datetime,
) -> HotseatDraw:
    return HotseatDraw(
        commitment_id=row.id,
        draw_index=outcome.index,
        moment=moment,
        candidates=json.dumps(list(outcome.candidates)),
        ineligible=json.dumps(sorted(bad)),
        picks=json.dumps(list(outcome.picks)),
        winner=outcome.winner,
        entry_id=entry_id,
        prize_cents=row.prize_cents if outcome.winner is not None else 0,
        taken_by=actor,
        taken_at=now,
    )


async def _taken(session: AsyncSession, row: HotseatCommitment) -> list[HotseatDraw]:
    rows = await session.execute(
        select(HotseatDraw)
        .where(HotseatDraw.commitment_id == row.id)
        .order_by(HotseatDraw.draw_index)
    )
    return list(rows.scalars())


async def _ready(session: AsyncSession, subject: str) -> HotseatCommitment:
    """The subject's commitment, not yet revealed (draws taken live may be there)."""
    row = await _commitment(session, subject)
    if row is None:
        raise _refuse("HS4", f"{subject} has no commitment: no draw without one")
    if row.revealed_at is not None:
        raise _refuse("HS5", f"{subject} is already drawn and revealed")
    return row


def heat_window(heat: Heat) -> tuple[datetime, datetime]:
    """The heat's running time: its start and its duration (HS2)."""
    if heat.started_at is None:
        raise _refuse("HS2", f"heat {heat.id} never started: it has no draw moments")
    return heat.started_at, heat.started_at + timedelta(seconds=heat.duration_seconds)


async def take_heat_draws(
    session: AsyncSession, heat_id: int, *, actor: str, now: datetime
) -> list[HotseatDraw]:
    """Take a closed heat's draws from the recorded facts and reveal the seed (HS1–HS5)."""
    actor = require_actor(actor)
    aware(now, "now")
    heat = await get(session, Heat, heat_id, "heat")
    row = await _ready(session, heat_subject(heat.id))
    if heat.status is not HeatStatus.CLOSED:
        raise _refuse("HS5", f"heat {heat.id} is {heat.status.value}: draws are revealed at close")
    start, end = heat_window(heat)
    seed = _seed_of(session, row)
    moments = draw_moments(seed, row.subject, start, end, row.draws)
    by_label, bad = await _eligibility(session, heat)
    live = await _taken(session, row)  # HS3: drawn as their moments fell
    done = {d.draw_index for d in live}
    taken = []
    for index, moment in enumerate(moments):
        if index in done:
            continue
        outcome = draw_winner(seed, row.subject, index, by_label, bad)
        entry = by_label[outcome.winner].entry_id if outcome.winner is not None else None
        taken.append(_draw_row(row, moment, outcome, bad, entry, actor, now))
    await _reveal(session, row, seed, taken, actor, now, earlier=live)
    return sorted([*live, *taken], key=lambda d: d.draw_index)


async def _eligibility(session: AsyncSession, heat: Heat) -> tuple[dict[str, Seat], list[str]]:
    """The heat's seats by label, and those that cannot win now (HS1: present and
    playing and not disqualified; a forfeited, moved or disqualified seat cannot)."""
    seats = (await session.execute(select(Seat).where(Seat.heat_id == heat.id))).scalars().all()
    by_label = {seat_label(s.seat_number): s for s in seats if s.status is not SeatStatus.CANCELLED}
    out_players, out_entries = await disqualified_sets(session, heat.tournament_id)
    bad = sorted(
        k
        for k, s in by_label.items()
        if s.status not in PLAYING or s.holder_player_id in out_players or s.entry_id in out_entries
    )
    return by_label, bad


async def due_live_draws(session: AsyncSession, now: datetime) -> list[tuple[int, int]]:
    """HS3: (heat, draw index) of every draw whose moment has come in a heat playing now
    and that is not taken yet, in moment order."""
    aware(now, "now")
    rows = await session.execute(
        select(HotseatCommitment, Heat)
        .join(Heat, Heat.id == HotseatCommitment.heat_id)
        .where(Heat.status.in_(LIVE), HotseatCommitment.revealed_at.is_(None))
        .order_by(Heat.id)
    )
    due: list[tuple[datetime, int, int]] = []
    for row, heat in rows.all():
        if heat.started_at is None:
            continue
        start, end = heat_window(heat)
        moments = draw_moments(_seed_of(session, row), row.subject, start, end, row.draws)
        done = {d.draw_index for d in await _taken(session, row)}
        due += [(m, heat.id, i) for i, m in enumerate(moments) if m <= now and i not in done]
    return [(heat_id, index) for _, heat_id, index in sorted(due)]


async def take_live_draw(
    session: AsyncSession, heat_id: int, index: int, *, actor: str, now: datetime
) -> HotseatDraw:
    """HS3: draw ``index`` of a heat that is playing, once its moment has come, from the
    seats eligible now; the winner is announced (audit, boards), the seed stays secret
    until the close (HS5)."""
    actor = require_actor(actor)
    aware(now, "now")
    heat = await get(session, Heat, heat_id, "heat")
    row = await _ready(session, heat_subject(heat.id))
    if heat.status not in LIVE:
        raise _refuse("HS3", f"heat {heat.id} is {heat.status.value}: a live draw is taken in play")
    if not 0 <= index < row.draws:
        raise _refuse(
            "HS2", f"draw: {index} is not a draw of heat {heat.id} (0 to {row.draws - 1})"
        )
    start, end = heat_window(heat)
    seed = _seed_of(session, row)
    moment = draw_moments(seed, row.subject, start, end, row.draws)[index]
    if moment > now:
        raise _refuse("HS2", f"draw {index} of heat {heat.id} falls later: its moment has not come")
    if index in {d.draw_index for d in await _taken(session, row)}:
        raise _refuse("HS3", f"draw {index} of heat {heat.id} is already taken")
    by_label, bad = await _eligibility(session, heat)
    outcome = draw_winner(seed, row.subject, index, by_label, bad)
    entry = by_label[outcome.winner].entry_id if outcome.winner is not None else None
    draw = _draw_row(row, moment, outcome, bad, entry, actor, now)
    session.add(draw)
    await session.flush()
    change_feed.note(  # the boards announce the winner now (the draw has no subject columns)
        session.sync_session,
        change_feed.Subject("hotseat_commitments", heat.tournament_id, heat.id, None),
    )
    await record(
        session,
        actor,
        "hotseat.draw.live",
        row.subject,
        None,
        commitment=row.commitment,
        index=index,
        moment=moment.isoformat(),
        picks=list(outcome.picks),
        winner=outcome.winner,
        entry_id=entry,
        prize_cents=draw.prize_cents,
        rule="HS3",
    )  # never the seed (HS5)
    return draw


async def _reveal(
    session: AsyncSession,
    row: HotseatCommitment,
    seed: bytes,
    taken: list[HotseatDraw],
    actor: str,
    now: datetime,
    *,
    earlier: list[HotseatDraw] | None = None,
) -> list[HotseatDraw]:
    """Store ``taken``, reveal the seed; the audit row lists every draw of the subject,
    ``earlier`` ones (taken live, HS3) included, in index order."""
    session.add_all(taken)
    row.revealed_by, row.revealed_at = actor, now
    row.seed_hex = seed.hex()
    await session.flush()
    await record(
        session,
        actor,
        "hotseat.draw",
        row.subject,
        None,
        commitment=row.commitment,
        seed=row.seed_hex,
        draws=[
            {
                "index": d.draw_index,
                "moment": None if d.moment is None else d.moment.isoformat(),
                "picks": json.loads(d.picks),
                "winner": d.winner,
                "entry_id": d.entry_id,
                "prize_cents": d.prize_cents,
            }
            for d in sorted([*(earlier or []), *taken], key=lambda d: d.draw_index)
        ],
        rule="HS5",
    )
    return taken


async def wildcard_candidates(
    session: AsyncSession, tournament_id: int, stage: Stage
) -> tuple[dict[str, int], list[str]]:
    """The entries of an over stage that did not go through, by entry id as text (HS6):
    ranked (so not disqualified), and not a player already through with another entry."""
    table = await stage_standings(session, tournament_id, stage)
    q = await qualifiers(session, tournament_id)
    if stage is Stage.QUALIFYING:
        through = set(q.qualifying.direct_finalists) | set(q.qualifying.semi_finalists)
        barred = set(q.qualifying.barred)
    else:
        through, barred = set(q.finalists_from_semis.selected), set()
    players_through = {line.player_id for line in table.lines if line.entry_id in through}
    out = {
        str(line.entry_id): line.entry_id
        for line in table.lines
        if line.entry_id not in through | barred and line.player_id not in players_through
    }
    return out, []


async def draw_wildcard(
    session: AsyncSession, tournament_ref: int | str, stage: Stage, *, actor: str, now: datetime
) -> HotseatDraw:
    """Draw a stage's wild card once it is over, and reveal the seed (HS5, HS6)."""
    actor = require_actor(actor)
    aware(now, "now")
    tournament = await find_tournament(session, tournament_ref)
    row = await _ready(session, wildcard_subject(tournament.id, stage.value))
    if not await stage_over(session, tournament.id, stage):
        raise _refuse("HS6", f"the {stage.value} is not over: the wild card is drawn after it")
    candidates, bad = await wildcard_candidates(session, tournament.id, stage)
    seed = _seed_of(session, row)
    outcome = draw_winner(seed, row.subject, 0, candidates, bad)
    entry = candidates[outcome.winner] if outcome.winner is not None else None
    (taken,) = await _reveal(
        session, row, seed, [_draw_row(row, None, outcome, bad, entry, actor, now)], actor, now
    )
    return taken


async def wildcard_entries(session: AsyncSession, tournament_id: int, stage: Stage) -> list[int]:
    """Entries a wild card out of ``stage`` sends on to the next stage (HS6)."""
    rows = await session.execute(
        select(HotseatDraw.entry_id)
        .join(HotseatCommitment, HotseatCommitment.id == HotseatDraw.commitment_id)
        .where(
            HotseatCommitment.subject == wildcard_subject(tournament_id, stage.value),
            HotseatDraw.entry_id.is_not(None),
        )
    )
    return [e for e in rows.scalars() if e is not None]


async def check_draw_payable(
    session: AsyncSession, draw_id: int, *, signer: str, signature: str, witness: str
) -> tuple[HotseatDraw, Entry, Player]:
    """Everything :func:`pay_draw` checks (HS7), writing nothing."""
    draw = await get(session, HotseatDraw, draw_id, "hot-seat draw")
    if draw.entry_id is None:
        raise _refuse("HS3", f"draw {draw_id} is void: nobody won it")
    if draw.prize_cents <= 0:
        raise _refuse("HS2", f"draw {draw_id} carries no prize")
    if draw.paid_at is not None:
        raise _refuse("HS7", f"draw {draw_id} was paid at {draw.paid_at:%Y-%m-%d %H:%M} UTC")
    await refuse_while_journaled(session, f"hotseat-draw:{draw.id}")
    entry = await get(session, Entry, draw.entry_id, "entry")
    player = await get(session, Player, entry.player_id, "player")
    try:
        signed: Player | None = await player_by_ref(session, signer, "signer")
    except PlayerNotFound:
        signed = None
    check_receipt(
        Winner(player.name, player.id_number, player.card_number),
        signer=player.id_number if signed is not None and signed.id == player.id else signer,
        signature=signature,
        witness=witness,
    )
    return draw, entry, player


async def pay_draw(
    session: AsyncSession,
    draw_id: int,
    *,
    signer: str,
    signature: str,
    witness: str,
    actor: str,
    now: datetime,
    tender: str | None = None,
) -> HotseatDraw:
    """Pay a won draw's prize to the winning entry's player, who signs for it (HS7).
    ``tender`` (on the audit row): None is cash; ``machine (AFT)`` a prize credited to
    the machine (P6), whose transfer row names this draw."""
    actor = require_actor(actor)
    aware(now, "now")
    draw, entry, player = await check_draw_payable(
        session, draw_id, signer=signer, signature=signature, witness=witness
    )
    draw.signer, draw.signature, draw.witness = signer.strip(), signature.strip(), witness.strip()
    draw.paid_by, draw.paid_at = actor, now
    await session.flush()
    extra = {"tender": tender} if tender is not None else {}
    await record(
        session,
        actor,
        "hotseat.paid",
        f"entry:{entry.id}",
        None,
        draw_id=draw.id,
        draw_index=draw.draw_index,
        player=player.id_number,
        amount_cents=draw.prize_cents,
        signer=draw.signer,
        signature=draw.signature,
        witness=draw.witness,
        rule="HS7",
        **extra,
    )
    return draw


@dataclass(frozen=True)
class Announcement:
    """What the boards and the API show of a subject: the commitment before the draw,
    the seed and the winners after (HS4, HS5)."""

    subject: str
    commitment: str
    draws: int
    prize_cents: int
    seed: str | None
    winners: tuple[tuple[int, str | None, int], ...]  # (index, winner, prize_cents)


async def announcement(session: AsyncSession, subject: str) -> Announcement | None:
    row = await _commitment(session, subject)
    if row is None:
        return None
    taken = await _taken(session, row)
    revealed = row.revealed_at is not None
    return Announcement(
        subject=row.subject,
        commitment=row.commitment,
        draws=row.draws,
        prize_cents=row.prize_cents,
        seed=row.seed_hex if revealed else None,  # HS5: never before the reveal
        winners=tuple((d.draw_index, d.winner, d.prize_cents) for d in taken),
    )


async def export_items(session: AsyncSession, subject: str) -> list[dict[str, object]]:
    """The ``hotseat`` list a signed export carries for a subject (docs/records.md)."""
    row = await _commitment(session, subject)
    if row is None:
        return []
    taken = await _taken(session, row)
    revealed = row.revealed_at is not None
    start = end = None
    if row.heat_id is not None:
        heat = await get(session, Heat, row.heat_id, "heat")
        if heat.started_at is not None:
            start, end = heat_window(heat)
    rebuilt = []
    for d in taken:  # as stored: the verifier, not this, recomputes them
        picks = tuple(json.loads(d.picks))
        outcome = DrawOutcome(d.draw_index, tuple(json.loads(d.candidates)), picks, d.winner)
        rebuilt.append((d.moment, outcome, json.loads(d.ineligible)))
    return [
        export_entry(
            subject=row.subject,
            committed=row.commitment,
            seed=bytes.fromhex(row.seed_hex) if revealed and row.seed_hex else None,
            start=start,
            end=end,
            draws=row.draws,
            prize_cents=row.prize_cents,
            taken=rebuilt,
        )
    ]
