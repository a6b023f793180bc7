"""A password checked at the door: the API's and the console's sign-in, and a second
person's password at the command line (:mod:`gateway.app.people`).

Theory of operation
-------------------
One attempt is three short steps, so no transaction is open while argon2 runs:

1. **Admission.**  The source address takes a turn (:class:`~gateway.accounts.lockout.Backoff`,
   in memory: refused at once, before any database work, while it backs off).  Then one
   ``UPDATE ... RETURNING`` (:func:`storage.accounts.claim_attempt`) counts the attempt
   as a failure on the account's row and holds the account for its verdict, unless the
   account is locked; committed at once.  Concurrent attempts on one account queue on
   the row and only one is admitted, so every evaluated failure is counted exactly
   (the lost updates of a read-modify-write let 51 of 200 through).  A name that is no
   enabled account takes a turn in the unknown names' backoff instead, which behaves as
   an account's does.
2. **Verify.**  argon2 in a worker thread under a few slots
   (:mod:`gateway.accounts.hashing`); a name that is no account verifies the dummy hash,
   so both cost one verify.
3. **Verdict.**  In one transaction: a success clears the count (and opens the browser
   session); a failure sets the backoff and is audited (``user.login-failed``) with each
   lock it starts (``user.login-locked``, ``login.source-locked``), under the actor
   ``anonymous@SOURCE``: nobody has proven who they are.  Throttled tries are refused
   before any of this and only logged, so a flood costs no audit row and no hash; the
   audited failures are bounded by the backoffs.

Never a permanent lock: the backoff is capped (:data:`~gateway.accounts.lockout.MAX_DELAY`)
and ``reelgate users unlock`` clears it.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.accounts import hashing, lockout
from gateway.accounts.lockout import Backoff
from gateway.accounts.roles import Role
from gateway.accounts.service import SESSION_TTL, Principal
from gateway.errors import OperatorError
from storage import audit
from storage.accounts import (
    AccountNameError,
    AccountSession,
    claim_attempt,
    locked_until_of,
    new_secret,
    normalise_name,
    secret_digest,
    settle_attempt,
)

log = logging.getLogger("reelgate.login")

WRONG = "login: unknown account or wrong password"
UNKNOWN_SUBJECT = "user:?"  # a name that is no account is not kept: it may be a password


class LoginFailed(OperatorError):
    """A refused login (wrong password, unknown name): one line for the person."""


class LoginThrottled(LoginFailed):
    """A login refused without being tried: the name or the source backs off."""

    def __init__(self, until: datetime, now: datetime) -> None:
        super().__init__(lockout.refusal(until, now) or "login: try again")
        self.retry_after = max(int((until - now).total_seconds()) + 1, 1)


@dataclass
class Gate:
    """One process's in-memory backoffs: per source address and per unknown name."""

    sources: Backoff = field(
        default_factory=lambda: Backoff(free=lockout.SOURCE_FREE_TRIES, in_flight=4)
    )
    unknown: Backoff = field(default_factory=Backoff)


@dataclass(frozen=True)
class Login:
    principal: Principal
    cookie: str
    csrf_token: str


Then = Callable[[AsyncSession, Principal, datetime], Awaitable[Login]]


@dataclass(frozen=True)
class _Claim:
    user_id: int | None  # None: no such enabled account
    failures: int
    stored_hash: str | None
    role: str


async def check(
    sessions: async_sessionmaker[AsyncSession],
    name: str,
    password: str,
    now: datetime,
    *,
    source: str,
    gate: Gate,
) -> Principal:
    """The account ``name`` once ``password`` proves it; :class:`LoginFailed` (or
    :class:`LoginThrottled`) otherwise, with the failure counted and audited."""
    return (await _attempt(sessions, name, password, now, source, gate, None)).principal


async def sign_in(
    sessions: async_sessionmaker[AsyncSession],
    name: str,
    password: str,
    now: datetime,
    *,
    source: str,
    gate: Gate,
) -> Login:
    """:func:`check`, then a browser session (cookie and CSRF token) opened with the
    success in the same transaction."""
    return await _attempt(sessions, name, password, now, source, gate, _open_session)


async def _open_session(session: AsyncSession, who: Principal, now: datetime) -> Login:
    cookie, csrf = new_secret(), secrets.token_hex(32)
    session.add(
        AccountSession(
            user_id=who.user_id,
            digest=secret_digest(cookie),
            csrf_token=csrf,
            created_at=now,
            expires_at=now + SESSION_TTL,
        )
    )
    await session.flush()
    return Login(who, cookie, csrf)


async def _attempt(
    sessions: async_sessionmaker[AsyncSession],
    name: str,
    password: str,
    now: datetime,
    source: str,
    gate: Gate,
    then: Then | None,
) -> Login:
    try:
        normal = normalise_name(name)
    except AccountNameError:
        raise LoginFailed(WRONG) from None
    held = gate.sources.admit(source, now)
    if held is not None:
        log.warning("login throttled: source %s, name %r", source, normal)
        raise LoginThrottled(held, now)
    claim = await _admit(sessions, normal, now, source, gate)
    try:
        ok = await hashing.verify(claim.stored_hash, password)
    except BaseException:  # cancelled: the turns end undecided (the row's hold expires)
        gate.sources.done(source, now, failed=False)
        if claim.user_id is None:
            gate.unknown.done(normal, now, failed=False)
        raise
    return await _verdict(sessions, normal, claim, ok, now, source, gate, then)


async def _admit(
    sessions: async_sessionmaker[AsyncSession],
    normal: str,
    now: datetime,
    source: str,
    gate: Gate,
) -> _Claim:
    try:
        async with sessions() as session, session.begin():
            row = await claim_attempt(session, normal, now, now + lockout.HOLD)
            locked = None if row is not None else await locked_until_of(session, normal)
    except BaseException:
        gate.sources.done(source, now, failed=False)
        raise
    if row is not None:
        return _Claim(row[0], row[1], row[2], row[3])
    if locked is None or locked <= now:  # no such enabled account: back off as one would
        locked = gate.unknown.admit(normal, now)
        if locked is None:
            return _Claim(None, 0, None, "")
    gate.sources.done(source, now, failed=False)
    log.warning("login throttled: account %r (source %s)", normal, source)
    raise LoginThrottled(locked, now)


async def _verdict(
    sessions: async_sessionmaker[AsyncSession],
    normal: str,
    claim: _Claim,
    ok: bool,
    now: datetime,
    source: str,
    gate: Gate,
    then: Then | None,
) -> Login:
    source_failures, source_lock = gate.sources.done(source, now, failed=not ok)
    if claim.user_id is None:
        failures, lock = gate.unknown.done(normal, now, failed=True)
    else:
        failures = claim.failures
        lock = None if ok else lockout.locked_until_after(failures, now)
    actor = f"anonymous@{source}"[:100]
    async with sessions() as session, session.begin():
        if ok and claim.user_id is not None:
            await settle_attempt(session, claim.user_id, success=True, locked_until=None, now=now)
            who = Principal(claim.user_id, normal, Role(claim.role))
            log.info("login: %r from %s", normal, source)
            if then is None:
                return Login(who, "", "")
            return await then(session, who, now)
        subject = UNKNOWN_SUBJECT if claim.user_id is None else f"user:{normal}"
        if claim.user_id is not None:
            await settle_attempt(session, claim.user_id, success=False, locked_until=lock, now=now)
        log.warning("login failed: %s from %s (%d in a row)", subject, source, failures)
        await audit.record(
            session,
            actor=actor,
            action="user.login-failed",
            subject=subject,
            details={"failures": failures, "source": source},
        )
        if lock is not None:
            log.warning("login locked: %s until %s", subject, lock.isoformat())
            await audit.record(
                session,
                actor=actor,
                action="user.login-locked",
                subject=subject,
                details={"failures": failures, "until": lock},
            )
        if source_lock is not None:
            log.warning("login source locked: %s until %s", source, source_lock.isoformat())
            await audit.record(
                session,
                actor=actor,
                action="login.source-locked",
                subject=f"source:{source}"[:200],
                details={"failures": source_failures, "until": source_lock},
            )
    raise LoginFailed(WRONG)
