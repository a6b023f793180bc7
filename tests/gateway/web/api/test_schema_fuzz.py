"""Schemathesis over /api/openapi.json: generated input never makes the API answer 5xx.

Every operation of the schema, each called with the token of a role that may call it (its
``x-permission``; a director where it names none), so that every write gets past the
permission check and into the models and services.  Bounded (a few examples per
operation, derandomised), in-process (ASGI, no socket), on a seeded SQLite file."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from sqlalchemy.pool import NullPool

from gateway.accounts.roles import PERMISSIONS, Permission, Role
from gateway.accounts.service import list_users
from gateway.records import chain
from gateway.tournament import services as svc
from gateway.web.api import create_app
from storage.db import Base, make_engine, make_sessionmaker
from tests.gateway.web.api import conftest as seed

APP = create_app(None, clock=lambda: seed.NOW)  # type: ignore[arg-type]
schema = schemathesis.openapi.from_asgi("/api/openapi.json", APP)
TOKENS: dict[str, str] = {}
USER_IDS: dict[str, int] = {}
# A disable revokes the account's tokens for good: the fuzz turns these two on a spare
# account whenever it drew the number of an account whose token it calls with.
ACCOUNT_STATE = {"/api/v1/users/{key}/disable", "/api/v1/users/{key}/enable"}
SPARE = "supervisor2"


async def _seed(url: str) -> None:
    import storage.models  # noqa: F401  (every table on Base.metadata)

    engine = make_engine(url)
    chain.bind(engine, url)  # the session's test keys (tests/conftest.py)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    desk = seed.Desk(make_sessionmaker(engine), client=None)  # type: ignore[arg-type]
    async with svc.unit_of_work(desk.sessions) as s:
        await seed._accounts(s, desk)
        await seed._floor(s)
        await seed._tournament(s, desk)
        await seed._entries(s, desk)
    await seed._super9(desk)
    async with desk.sessions() as s:
        USER_IDS.update({u.name: u.id for u in await list_users(s)})
    await engine.dispose()
    TOKENS.update(desk.tokens)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    from argon2 import PasswordHasher

    import storage.accounts

    saved = storage.accounts.HASHER
    storage.accounts.HASHER = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    url = f"sqlite+aiosqlite:///{Path(tmp_path_factory.mktemp('fuzz')) / 'api.db'}"
    asyncio.run(_seed(url))
    # Each ASGI call runs on its own event loop: no pooled connection may outlive it.
    engine = make_engine(url, poolclass=NullPool)
    chain.bind(engine, url)
    APP.state.api.sessions = make_sessionmaker(engine)
    yield
    storage.accounts.HASHER = saved
    asyncio.run(engine.dispose())


@pytest.fixture(autouse=True)
def cheap_argon2() -> None:
    """The module fixture already swapped the hasher (overrides conftest's per-test one)."""


def caller_of(operation: dict[str, Any]) -> str:
    """The account to call an operation as: one whose role may — a director where it may
    (a cashier sees only their own cash-up), else the first role that is not the read-only
    auditor, so writes reach the services."""
    named = operation.get("x-permission")
    if named is None:
        return "director"
    roles = sorted(r.value for r in PERMISSIONS[Permission(named)])
    if Role.DIRECTOR in roles:
        return Role.DIRECTOR.value
    return next((r for r in roles if r != Role.AUDITOR), roles[0])


def test_every_operation_names_a_permission_or_is_open_to_every_account() -> None:
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    open_to_all = {op.label for op in operations if "x-permission" not in op.definition.raw}
    assert open_to_all == {
        "POST /api/v1/login", "POST /api/v1/logout", "GET /api/v1/me", "GET /api/v1/pending",
        "POST /api/v1/pending/{key}/approve", "POST /api/v1/pending/{key}/reject",
    }  # fmt: skip


@schema.parametrize()
@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_no_server_error(case: Any, seeded: None) -> None:
    operation = case.operation.definition.raw
    account = caller_of(operation)
    if case.operation.path in ACCOUNT_STATE:
        used = {str(USER_IDS[name]) for name in TOKENS if name != SPARE}
        if str(case.path_parameters.get("key")) in used:
            case.path_parameters = {**case.path_parameters, "key": USER_IDS[SPARE]}
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {TOKENS[account]}"}
    response = case.call()
    assert response.status_code < 500, (case.method, case.formatted_path, response.text)
    if "x-permission" in operation:  # a token of a role that may: never refused as such
        assert response.status_code not in (401, 403), (case.formatted_path, response.text)
