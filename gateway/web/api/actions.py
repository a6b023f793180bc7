"""How a write runs: at once, or — under dual control — as a pending action a second
account approves (:mod:`gateway.accounts.dual`).

Each runs in the request's one transaction (:class:`~gateway.web.api.auth.Caller`).
A dual-control request is first tried against the same service inside a savepoint
that is rolled back, so a request the rules refuse is refused at once, in the rules'
words, and never waits for an approver.  On approval the stored body is validated again
by its model and run, in the approver's transaction, under the requester's name; both
steps are in the audit log (``dual.request``, ``dual.approve``).

Some rules name the second person in the record itself (a manual spin's confirmer, a
prize receipt's witness, a number change's sign-off): such an action registers its
``approver`` field, which the requester cannot fill — the trial run carries
:data:`TRIAL_APPROVER`, and on approval the field is the approving account's name.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts import service
from gateway.accounts.dual import is_dual
from gateway.accounts.roles import Permission
from gateway.accounts.service import Principal
from gateway.tournament.services.common import unit_of_work
from gateway.web.api.auth import Api, Caller
from gateway.web.api.errors import ApiError
from gateway.web.api.models import Decision, PendingOut

B = TypeVar("B", bound=BaseModel)
Runner = Callable[[AsyncSession, B, str, datetime], Awaitable[dict[str, Any]]]


TRIAL_APPROVER = "(second person)"


@dataclass(frozen=True)
class DualAction:
    body: type[BaseModel]
    run: Runner[Any]
    approver: str | None = None  # the body field naming the approving account


DUAL: dict[Permission, DualAction] = {}


def dual(
    permission: Permission, body: type[B], *, approver: str | None = None
) -> Callable[[Runner[B]], Runner[B]]:
    """Register the runner of a dual-control permission (replayed on approval)."""
    if not is_dual(permission):
        raise ValueError(f"{permission.value} is not a dual-control action")
    if approver is not None and approver not in body.model_fields:
        raise ValueError(f"{body.__name__} has no field {approver!r}")

    def register(run: Runner[B]) -> Runner[B]:
        DUAL[permission] = DualAction(body, run, approver)
        return run

    return register


async def perform(api: Api, who: Principal, run: Runner[B], body: B) -> dict[str, Any]:
    """Run a single-person write as ``who``: in the request's transaction when ``who``
    is its :class:`Caller`, else in a transaction of its own."""
    if isinstance(who, Caller):
        return await run(who.session, body, who.name, api.clock())
    async with unit_of_work(api.sessions) as session:
        return await run(session, body, who.name, api.clock())


def _session_of(who: Principal) -> AsyncSession:
    if not isinstance(who, Caller):  # a programming error: handlers get a Caller
        raise TypeError("dual control runs in the request's transaction; pass its Caller")
    return who.session


async def request(api: Api, who: Principal, permission: Permission, body: BaseModel) -> PendingOut:
    action = DUAL[permission]
    now = api.clock()
    session = _session_of(who)
    unnamed = set() if action.approver is None else {action.approver}
    tried = body.model_copy(update=dict.fromkeys(unnamed, TRIAL_APPROVER))
    trial = await session.begin_nested()
    try:
        await action.run(session, tried, who.name, now)
    finally:
        await trial.rollback()
    payload = body.model_dump(mode="json", exclude=unnamed)
    pending = await service.request_action(session, permission, payload, by=who, now=now)
    return PendingOut(
        pending=pending.id,
        kind=pending.kind,
        status=pending.status,
        requested_by=who.name,
        payload=payload,
    )


async def approve(api: Api, who: Principal, pending_id: int) -> Decision:
    now = api.clock()
    session = _session_of(who)
    pending, requester = await service.decide(session, pending_id, by=who, approve=True, now=now)
    action = DUAL.get(Permission(pending.kind))
    if action is None:  # pragma: no cover - every dual permission registers a runner
        raise ApiError(409, f"pending action {pending_id}: {pending.kind} cannot run here")
    stored = pending.payload_dict()
    if action.approver is not None:
        stored[action.approver] = who.name
    body = action.body.model_validate(stored)
    result = await action.run(session, body, requester.name, now)
    pending.result = json.dumps(result, sort_keys=True, default=str)
    return Decision(pending=pending.id, status=pending.status, result=result)


async def reject(api: Api, who: Principal, pending_id: int) -> Decision:
    pending, _ = await service.decide(
        _session_of(who), pending_id, by=who, approve=False, now=api.clock()
    )
    return Decision(pending=pending.id, status=pending.status)
