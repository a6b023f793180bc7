"""Accounts: who is at the desk, proven by a password, a session cookie or an API token.

``users``            one person (or one integration) with one role.  ``name`` is stored
                     normalised (:func:`normalise_name`), so ``dealer``, ``Dealer`` and
                     ``dealer `` are one account and dual control cannot be fooled by
                     spelling.  ``password_hash`` is argon2id (argon2-cffi's default
                     type); ``failed_logins`` / ``locked_until`` carry the login backoff.
``api_tokens``       a bearer token for an integration or the CLI, owned by a user,
                     scoped to one role and expiring.  Only ``sha256(secret)`` is stored:
                     a copy of the database lets nobody act.  ``prefix`` is the public
                     part shown in listings.
``account_sessions`` a browser login: ``sha256(cookie)`` and the CSRF token that every
                     write from that browser must echo back.
``pending_actions``  a dual-control action one account asked for and a second, different
                     account must approve (or reject) before it runs.

The roles and what they may do live in :mod:`gateway.accounts`; storage only keeps rows.
Secrets are compared by their hash in SQL, never by the secret.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import unicodedata
from datetime import datetime
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.types import UTCDateTime

NAME_MAX = 64
TOKEN_PREFIX = "rg_"

# argon2-cffi's defaults are RFC 9106's second recommendation (argon2id, 64 MiB, t=3).
# Tests may swap in a cheaper hasher through this module attribute.
HASHER = PasswordHasher()


class AccountNameError(ValueError):
    """A user name that is empty, too long or holds control characters."""


def normalise_name(name: str) -> str:
    """The one spelling of an account name: NFKC, case-folded, inner runs of white space
    made one space, trimmed."""
    folded = " ".join(unicodedata.normalize("NFKC", name).casefold().split())
    if not folded:
        raise AccountNameError("name: an account needs a name")
    if len(folded) > NAME_MAX:
        raise AccountNameError(f"name: at most {NAME_MAX} characters")
    if any(unicodedata.category(c).startswith("C") for c in folded):
        raise AccountNameError("name: no control characters")
    return folded


def hash_password(password: str) -> str:
    return HASHER.hash(password)


def password_matches(stored_hash: str, password: str) -> bool:
    try:
        return HASHER.verify(stored_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def secret_digest(secret: str) -> str:
    """How a token or session secret is kept: high-entropy, so one sha256 suffices."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_secret() -> str:
    return secrets.token_urlsafe(32)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX), unique=True)
    role: Mapped[str] = mapped_column(String(32))
    password_hash: Mapped[str] = mapped_column(String(200))
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_by: Mapped[str] = mapped_column(String(100))
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The last password sign-in (console or API /login); NULL: never since 0018.
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    prefix: Mapped[str] = mapped_column(String(16))
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(32))
    label: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class AccountSession(Base):
    __tablename__ = "account_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class PendingAction(Base):
    __tablename__ = "pending_actions"
    __table_args__ = (Index("ix_pending_actions_status", "status"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    payload: Mapped[str] = mapped_column(Text)  # JSON of the request, replayed on approval
    requested_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime())
    status: Mapped[str] = mapped_column(String(16), default="pending")
    decided_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    result: Mapped[str | None] = mapped_column(Text)

    def payload_dict(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.payload)
        return loaded


async def user_by_name(session: AsyncSession, name: str) -> User | None:
    found = await session.execute(select(User).where(User.name == normalise_name(name)))
    return found.scalar_one_or_none()


async def token_by_secret(session: AsyncSession, secret: str) -> ApiToken | None:
    found = await session.execute(select(ApiToken).where(ApiToken.digest == secret_digest(secret)))
    return found.scalar_one_or_none()


async def session_by_secret(session: AsyncSession, secret: str) -> AccountSession | None:
    found = await session.execute(
        select(AccountSession).where(AccountSession.digest == secret_digest(secret))
    )
    return found.scalar_one_or_none()


async def claim_attempt(
    session: AsyncSession, name: str, now: datetime, hold_until: datetime
) -> tuple[int, int, str, str] | None:
    """Admit one login attempt on the enabled account ``name`` unless it is locked at
    ``now``: in ONE statement count it as a failure (until its verdict says otherwise)
    and hold the account until ``hold_until``.  The row lock of the UPDATE (PostgreSQL)
    or the single writer (SQLite) makes concurrent attempts queue here, and each one
    re-reads the lock the one before it set: exactly one is admitted at a time and every
    admitted attempt is counted.  Returns ``(id, failures, password_hash, role)``, or
    None when there is no such enabled account or it is locked."""
    query = (
        update(User)
        .where(
            User.name == name,
            User.disabled.is_(False),
            or_(User.locked_until.is_(None), User.locked_until <= now),
        )
        .values(failed_logins=User.failed_logins + 1, locked_until=hold_until)
        .returning(User.id, User.failed_logins, User.password_hash, User.role)
        .execution_options(synchronize_session=False)
    )
    row = (await session.execute(query)).first()
    if row is None:
        return None
    return int(row[0]), int(row[1]), str(row[2]), str(row[3])


async def settle_attempt(
    session: AsyncSession,
    user_id: int,
    *,
    success: bool,
    locked_until: datetime | None,
    now: datetime,
) -> None:
    """An admitted attempt's verdict: a success clears the count and stamps the sign-in
    time; a failure keeps the count and sets the backoff (None: the next try may come at
    once)."""
    values: dict[str, Any] = {"locked_until": None if success else locked_until}
    if success:
        values["failed_logins"] = 0
        values["last_login_at"] = now
    await session.execute(
        update(User)
        .where(User.id == user_id)
        .values(**values)
        .execution_options(synchronize_session=False)
    )


async def locked_until_of(session: AsyncSession, name: str) -> datetime | None:
    """The lock of the enabled account ``name`` (None: none, or no such account)."""
    found = await session.execute(
        select(User.locked_until).where(User.name == name, User.disabled.is_(False))
    )
    return found.scalar_one_or_none()


async def clear_failures(session: AsyncSession, user_id: int) -> None:
    await session.execute(
        update(User)
        .where(User.id == user_id)
        .values(failed_logins=0, locked_until=None)
        .execution_options(synchronize_session=False)
    )
