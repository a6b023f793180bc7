"""The cash desk and Guest Relations: find players by what they show (a name, a card or
an ID number — never only a database id), list them, load an exclusion register,
disqualify, and list a tournament's entries.  Each is the CLI's (``reelgate players``,
``reelgate entries list``) on the same service."""

from __future__ import annotations

import csv
import io
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.tournament import services as svc
from gateway.tournament.rules.exclusion_csv import COLUMNS, ExclusionCsvError, listed
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.entry_list import list_entries
from gateway.tournament.services.lookup import search_players
from gateway.tournament.services.people import list_players
from gateway.web.api import actions
from gateway.web.api.auth import Caller, api_of, who
from gateway.web.api.cashier_models import (
    DisqualificationOut,
    DisqualifyIn,
    EntryOut,
    ExclusionImportIn,
    ExclusionImportOut,
    PlayerRow,
)
from gateway.web.api.models import PLAYER_REF_DOC, PLAYER_REF_PATTERN, REF_PATTERN
from gateway.web.api.routes import needs

router = APIRouter(tags=["cashier"])
Ref = Annotated[str, Path(pattern=REF_PATTERN)]
Search = Annotated[str | None, Query(max_length=100, pattern=REF_PATTERN)]


def _row(p: Any) -> PlayerRow:
    return PlayerRow(
        id=p.id,
        id_number=p.id_number,
        name=p.name,
        date_of_birth=p.date_of_birth,
        card=p.card_number,
    )


@router.get("/players", openapi_extra=needs(P.PLAYER_READ))
async def players(
    q: Search = None,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
    me: Caller = who(P.PLAYER_READ),
) -> list[PlayerRow]:
    """``q``: part of the name (two letters at least), a card or an ID number — the
    players it finds, by name; without it, every player in registration order."""
    if q is not None:
        return [_row(p) for p in await search_players(me.session, q, limit=limit)]
    return [_row(p) for p in (await list_players(me.session))[:limit]]


def _register_text(body: ExclusionImportIn) -> str:
    """The rows as the register file the service reads (header first)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in body.rows:
        writer.writerow([getattr(r, column) for column in COLUMNS])
    return out.getvalue()


def _by_row(exc: ExclusionCsvError) -> RuleViolation:
    """The register's refusal naming the row of the request (line 2 of the file is row 0)."""
    rows = [(f"rows[{line - 2}]", message) for line, message in exc.problems]
    return RuleViolation(exc.rule, listed("", rows))


@router.post("/exclusions/imports", status_code=201, openapi_extra=needs(P.PLAYER_EXCLUSIONS))
async def import_exclusions(
    request: Request, body: ExclusionImportIn, me: Principal = who(P.PLAYER_EXCLUSIONS)
) -> ExclusionImportOut:
    """Load an exclusion register (T2, T3): the rows are checked whole first (one bad row
    refuses all, naming it); players it bars now are disqualified in every tournament
    they hold entries in."""

    async def run(
        session: AsyncSession, b: ExclusionImportIn, actor: str, now: datetime
    ) -> dict[str, Any]:
        try:
            result = await svc.import_exclusions(
                session, _register_text(b), source=b.source, actor=actor, now=now, venue_zone=b.zone
            )
        except ExclusionCsvError as exc:
            raise _by_row(exc) from None
        return {
            "added": result.added,
            "disqualified": [
                {"tournament": t, "player": p} for t, p in result.players_disqualified
            ],
        }

    return ExclusionImportOut(**await actions.perform(api_of(request), me, run, body))


@router.post(
    "/tournaments/{ref}/disqualifications",
    status_code=201,
    openapi_extra=needs(P.PLAYER_DISQUALIFY),
)
async def disqualify(
    request: Request, ref: Ref, body: DisqualifyIn, me: Principal = who(P.PLAYER_DISQUALIFY)
) -> DisqualificationOut:
    """Disqualify a player, or one entry (rules 2, 20, 23): out of every ranking, unused
    entries forfeited (never refunded)."""

    async def run(
        session: AsyncSession, b: DisqualifyIn, actor: str, now: datetime
    ) -> dict[str, Any]:
        dq = await svc.disqualify(
            session, ref, b.player, rule=b.rule, reason=b.reason, actor=actor, now=now,
            entry_id=b.entry,
        )  # fmt: skip
        return {"disqualification": dq.id, "player": dq.player_id, "rule": int(dq.rule)}

    return DisqualificationOut(**await actions.perform(api_of(request), me, run, body))


@router.get("/tournaments/{ref}/entries", openapi_extra=needs(P.PLAYER_READ))
async def entries(
    ref: Ref,
    player: Annotated[
        str | None, Query(pattern=PLAYER_REF_PATTERN, description=PLAYER_REF_DOC)
    ] = None,
    me: Caller = who(P.PLAYER_READ),
) -> list[EntryOut]:
    """The tournament's entries in sale order; ``player`` (an ID, card or player number):
    only that player's."""
    _, rows = await list_entries(me.session, ref, player)
    return [
        EntryOut(
            entry=r.entry,
            player=r.player,
            player_name=r.player_name,
            status=r.status.value,
            kind=r.kind.value,
            package=r.package,
            purchase=r.purchase,
            purchased_at=r.purchased_at,
            valid_until=r.valid_until,
        )
        for r in rows
    ]
