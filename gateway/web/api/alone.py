"""A request whose action opens transactions of its own: a bank check, enable or disable
through the process driving the machines (:mod:`gateway.web.console.control`).

The caller is authenticated in a read-only transaction that is closed before the handler
runs, so the request holds no transaction (nor SQLite's writer turn) while the gateway
writes — as the console's ``alone`` pages (:mod:`gateway.web.console.auth`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from fastapi import Depends, Request
from structlog.contextvars import bound_contextvars

from gateway.accounts.roles import Permission, allowed
from gateway.accounts.service import Principal
from gateway.web.api.auth import api_of, authenticate
from gateway.web.api.errors import ApiError
from storage.database_mark import is_training
from storage.db import READ_ONLY


def require_alone(permission: Permission) -> Callable[[Request], AsyncIterator[Principal]]:
    async def dependency(request: Request) -> AsyncIterator[Principal]:
        api = api_of(request)
        async with api.sessions() as session, session.begin():
            await session.connection(execution_options=READ_ONLY)
            if api.training is None:
                api.training = await is_training(session)
            who = await authenticate(request, session, api.clock())
        if not allowed(who.role, permission):
            raise ApiError(403, f"permission: role {who.role.value} may not {permission.value}")
        with bound_contextvars(account=who.name):
            yield who

    return dependency


def who_alone(permission: Permission) -> Principal:
    """``me: Principal = who_alone(Permission.X)`` in a handler's signature."""
    caller: Principal = Depends(require_alone(permission), scope="function")
    return caller
