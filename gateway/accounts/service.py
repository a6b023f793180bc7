"""Account services over :mod:`storage.accounts`: users, tokens, browser sessions and the
pending actions of dual control.  Each works inside the caller's transaction and audits
every change under the account that made it.  Refusals are :class:`OperatorError` lines.
Checking a password at sign-in is :mod:`gateway.accounts.signin` (transactions of its
own, argon2 off the event loop)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts import hashing
from gateway.accounts.dual import (
    Decider,
    DualControlForbidden,
    DualControlRefused,
    check_approval,
    check_rejection,
    check_requester,
)
from gateway.accounts.passwords import policy_refusal
from gateway.accounts.roles import Permission, Role, parse_role
from gateway.errors import OperatorError
from storage import audit
from storage.accounts import (
    TOKEN_PREFIX,
    AccountNameError,
    AccountSession,
    ApiToken,
    PendingAction,
    User,
    clear_failures,
    new_secret,
    normalise_name,
    secret_digest,
    user_by_name,
)

VOID = "void"  # a pending action whose requester was disabled; it can never run
SESSION_TTL = timedelta(hours=12)
TOKEN_MAX_TTL = timedelta(days=366)


@dataclass(frozen=True)
class Principal:
    """The authenticated account a request or command acts as."""

    user_id: int
    name: str
    role: Role


def name_of(text: str) -> str:
    try:
        return normalise_name(text)
    except AccountNameError as exc:
        raise OperatorError(str(exc)) from None


def role_of(text: str) -> Role:
    try:
        return parse_role(text)
    except ValueError as exc:
        raise OperatorError(str(exc)) from None


def check_password(password: str, *, account: str | None = None) -> str:
    """``password`` when the policy (:mod:`gateway.accounts.passwords`) allows it."""
    why_not = policy_refusal(password, account=account)
    if why_not is not None:
        raise OperatorError(why_not)
    return password


async def _user(session: AsyncSession, name: str) -> User:
    user = await user_by_name(session, name_of(name))
    if user is None:
        raise OperatorError(f"user {name_of(name)!r} does not exist")
    return user


async def add_user(
    session: AsyncSession, name: str, role: str, password: str, *, actor: str, now: datetime
) -> User:
    normal = name_of(name)
    parsed = role_of(role)
    check_password(password, account=normal)
    if await user_by_name(session, normal) is not None:
        raise OperatorError(f"user {normal!r} already exists (names ignore case and spaces)")
    user = User(
        name=normal,
        role=parsed.value,
        password_hash=await hashing.hash_new(password),  # argon2 off the loop
        disabled=False,
        created_at=now,
        created_by=actor,
        failed_logins=0,
    )
    session.add(user)
    await session.flush()
    await audit.record(
        session, actor=actor, action="user.add", subject=f"user:{normal}", details={"role": parsed}
    )
    return user


async def list_users(session: AsyncSession) -> list[User]:
    return list((await session.scalars(select(User).order_by(User.name))).all())


def check_disable(user: User, *, by: int) -> None:
    """The refusals of a signed-in admin's disable (console and API; the host's CLI
    leaves them to its operator): not their own account (the venue would be left
    without a way in), not twice."""
    if user.id == by:
        raise OperatorError("name: you may not disable your own account; another admin may")
    if user.disabled:
        raise OperatorError(f"name: {user.name} is already disabled")


async def _revoke_tokens_of(
    session: AsyncSession, user: User, *, actor: str, now: datetime | None
) -> None:
    """Revoke every live API token of a disabled ``user``, each audited."""
    live = select(ApiToken).where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
    for token in (await session.scalars(live)).all():
        token.revoked_at = now if now is not None else datetime.now(UTC)
        await audit.record(
            session,
            actor=actor,
            action="token.revoke",
            subject=f"token:{token.id}",
            details={"user": user.name, "why": "disabled"},
        )


async def disable_user(
    session: AsyncSession, name: str, *, actor: str, now: datetime | None = None
) -> User:
    user = await _user(session, name)
    user.disabled = True
    # A disabled account keeps no way in: its browser sessions end with it, and its API
    # tokens are revoked (not merely refused while it is disabled), so enabling it again
    # never brings back a token that was the reason for the disable.
    await session.execute(delete(AccountSession).where(AccountSession.user_id == user.id))
    await audit.record(session, actor=actor, action="user.disable", subject=f"user:{user.name}")
    await _revoke_tokens_of(session, user, actor=actor, now=now)
    # Nor a way through a second person: what it asked for and nobody decided yet would
    # run under its name on approval.
    query = (
        select(PendingAction)
        .where(PendingAction.requested_by == user.id, PendingAction.status == "pending")
        .with_for_update()
    )
    for pending in (await session.scalars(query)).all():
        pending.status = VOID
        pending.decided_at = now
        await audit.record(
            session,
            actor=actor,
            action="dual.void",
            subject=f"pending:{pending.id}",
            details={"kind": pending.kind, "requested_by": user.name, "why": "disabled"},
        )
    return user


async def enable_user(
    session: AsyncSession, name: str, *, actor: str, now: datetime | None = None
) -> User:
    """Re-enable a disabled account, under the same single ``accounts.manage`` control as
    :func:`disable_user`.  It gets back only its password: the sessions ended, the tokens
    revoked and the pending actions voided with the disable stay so."""
    user = await _user(session, name)
    if not user.disabled:
        raise OperatorError(f"user {user.name!r} is not disabled")
    # A token still live here predates the revoke-on-disable (an account disabled before
    # it) or was made for the disabled account on the host: it does not come back either.
    await _revoke_tokens_of(session, user, actor=actor, now=now)
    user.disabled = False
    await audit.record(session, actor=actor, action="user.enable", subject=f"user:{user.name}")
    return user


async def reset_password(session: AsyncSession, name: str, password: str, *, actor: str) -> User:
    user = await _user(session, name)
    user.password_hash = await hashing.hash_new(check_password(password, account=user.name))
    user.failed_logins = 0
    user.locked_until = None
    await session.execute(delete(AccountSession).where(AccountSession.user_id == user.id))
    await audit.record(
        session, actor=actor, action="user.reset-password", subject=f"user:{user.name}"
    )
    return user


async def unlock_user(session: AsyncSession, name: str, *, actor: str) -> User:
    """Clear an account's failed logins and backoff (an administrator's word)."""
    user = await _user(session, name)
    await clear_failures(session, user.id)
    await session.refresh(user)
    await audit.record(session, actor=actor, action="user.unlock", subject=f"user:{user.name}")
    return user


async def create_token(
    session: AsyncSession,
    user_name: str,
    *,
    role: str | None,
    expires_at: datetime,
    label: str,
    actor: str,
    now: datetime,
) -> tuple[ApiToken, str]:
    """A new token and its secret (shown once; only its digest is kept).  Its role is the
    owner's, or ``auditor`` (read-only) to narrow an integration's reach."""
    user = await _user(session, user_name)
    scope = Role(user.role) if role is None else role_of(role)
    if scope not in (Role(user.role), Role.AUDITOR):
        raise OperatorError(
            f"--role: a token of {user.name} may carry role {user.role} or auditor, not {scope}"
        )
    if expires_at <= now:
        raise OperatorError("--expires: the token would already have expired")
    if expires_at - now > TOKEN_MAX_TTL:
        raise OperatorError(f"--expires: at most {TOKEN_MAX_TTL.days} days ahead")
    secret = TOKEN_PREFIX + new_secret()
    token = ApiToken(
        user_id=user.id,
        prefix=secret[: len(TOKEN_PREFIX) + 8],
        digest=secret_digest(secret),
        role=scope.value,
        label=label.strip()[:100] or "token",
        created_at=now,
        expires_at=expires_at,
    )
    session.add(token)
    await session.flush()
    await audit.record(
        session,
        actor=actor,
        action="token.create",
        subject=f"user:{user.name}",
        details={"token": token.id, "role": scope, "expires_at": expires_at},
    )
    return token, secret


async def revoke_token(session: AsyncSession, token_id: int, *, actor: str, now: datetime) -> None:
    token = await session.get(ApiToken, token_id)
    if token is None:
        raise OperatorError(f"token {token_id} does not exist")
    token.revoked_at = now
    await audit.record(session, actor=actor, action="token.revoke", subject=f"token:{token_id}")


async def list_tokens(session: AsyncSession) -> list[tuple[ApiToken, str]]:
    rows = await session.execute(
        select(ApiToken, User.name).join(User, User.id == ApiToken.user_id).order_by(ApiToken.id)
    )
    return [(t, n) for t, n in rows.all()]


# Built once (every API request runs it; building a SELECT costs more CPU than its
# compiled-cache lookup).
_TOKEN_AND_OWNER = (
    select(ApiToken, User)
    .join(User, User.id == ApiToken.user_id)
    .where(ApiToken.digest == bindparam("digest"))
)


async def principal_for_token(
    session: AsyncSession, secret: str, now: datetime
) -> Principal | None:
    # Token and owner in one round trip: every API request starts here.
    found = (await session.execute(_TOKEN_AND_OWNER, {"digest": secret_digest(secret)})).first()
    if found is None:
        return None
    token, user = found
    if token.revoked_at is not None or token.expires_at <= now or user.disabled:
        return None
    return Principal(user.id, user.name, Role(token.role))


class DecisionForbidden(OperatorError):
    """A dual-control decision the account's role may not take (403 over the API)."""

    http_status = 403


async def principal_for_session(
    session: AsyncSession, cookie: str, now: datetime
) -> tuple[Principal, str] | None:
    """The account behind a browser session cookie and the session's CSRF token."""
    query = (
        select(AccountSession, User)
        .join(User, User.id == AccountSession.user_id)
        .where(AccountSession.digest == secret_digest(cookie))
    )
    found = (await session.execute(query)).first()
    if found is None:
        return None
    row, user = found
    if row.expires_at <= now or user.disabled:
        return None
    return Principal(user.id, user.name, Role(user.role)), row.csrf_token


async def logout(session: AsyncSession, cookie: str) -> None:
    await session.execute(
        delete(AccountSession).where(AccountSession.digest == secret_digest(cookie))
    )


async def request_action(
    session: AsyncSession,
    permission: Permission,
    payload: Mapping[str, Any],
    *,
    by: Principal,
    now: datetime,
) -> PendingAction:
    pending = PendingAction(
        kind=permission.value,
        payload=json.dumps(dict(payload), sort_keys=True),
        requested_by=by.user_id,
        requested_at=now,
        status="pending",
    )
    session.add(pending)
    await session.flush()
    await audit.record(
        session,
        actor=by.name,
        action="dual.request",
        subject=f"pending:{pending.id}",
        details={"kind": permission.value, "payload": dict(payload)},
    )
    return pending


async def decide(
    session: AsyncSession, pending_id: int, *, by: Principal, approve: bool, now: datetime
) -> tuple[PendingAction, Principal]:
    """Approve or reject a pending action (locked for this transaction); returns it and
    the requester.  The caller runs an approved action in the same transaction."""
    query = select(PendingAction).where(PendingAction.id == pending_id).with_for_update()
    pending = (await session.execute(query)).scalar_one_or_none()
    if pending is None:
        raise OperatorError(f"pending action {pending_id} does not exist")
    permission = Permission(pending.kind)
    requester = await session.get(User, pending.requested_by)
    if requester is None:  # pragma: no cover - a foreign key keeps it
        raise OperatorError(f"pending action {pending_id}: requester is gone")
    decider = Decider(by.user_id, by.role)
    try:
        if approve:
            check_approval(
                permission, requester_id=pending.requested_by, approver=decider,
                status=pending.status,
            )  # fmt: skip
            check_requester(
                permission, name=requester.name, role=Role(requester.role),
                disabled=requester.disabled,
            )  # fmt: skip
        else:
            check_rejection(
                permission, requester_id=pending.requested_by, rejecter=decider,
                status=pending.status,
            )  # fmt: skip
    except DualControlForbidden as exc:
        raise DecisionForbidden(str(exc)) from None
    except DualControlRefused as exc:
        raise OperatorError(str(exc)) from None
    withdrawn = not approve and by.user_id == pending.requested_by
    pending.status = "approved" if approve else "withdrawn" if withdrawn else "rejected"
    pending.decided_by = by.user_id
    pending.decided_at = now
    await audit.record(
        session,
        actor=by.name,
        action="dual.approve" if approve else "dual.withdraw" if withdrawn else "dual.reject",
        subject=f"pending:{pending.id}",
        details={"kind": pending.kind, "requested_by": requester.name},
    )
    return pending, Principal(requester.id, requester.name, Role(requester.role))


async def list_pending(
    session: AsyncSession, status: str | None = "pending"
) -> list[PendingAction]:
    query = select(PendingAction).order_by(PendingAction.id)
    if status is not None:
        query = query.where(PendingAction.status == status)
    return list((await session.scalars(query)).all())
