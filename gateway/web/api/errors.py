"""Errors as JSON, in the words the CLI prints.

Each mapping is for a known kind of refusal, not a net for bugs: a rule or field the
service refused (422, with the rule number), a change that lost a race (409), a value
too long for its column (422), a database that cannot be reached (503).  Input is
bounded by the models first, so these only carry what the services say.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, IntegrityError
from starlette.exceptions import HTTPException

from gateway.errors import IdempotencyConflict, OperatorError
from storage.types import ValueTooLong


class ApiError(HTTPException):
    """A refusal by the API itself (401, 403, 404) with a one-line reason."""


def problem(status: int, error: str, rule: int | None = None) -> JSONResponse:
    return JSONResponse({"error": error, "rule": rule}, status_code=status)


def _field(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path")]
    return ".".join(parts) or "body"


async def _validation(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    first = errors[0] if errors else {"loc": ("body",), "msg": "invalid request"}
    return problem(422, f"{_field(tuple(first['loc']))}: {first['msg']}")


async def _reused_key(_: Request, exc: Exception) -> JSONResponse:
    return problem(409, str(exc))


async def _operator(_: Request, exc: Exception) -> JSONResponse:
    # A refusal of the account's role (e.g. a dual-control rejection) is a 403.
    return problem(getattr(exc, "http_status", 422), str(exc), getattr(exc, "rule", None))


async def _too_long(_: Request, exc: Exception) -> JSONResponse:
    return problem(422, f"{exc}; nothing saved")


async def _conflict(_: Request, exc: Exception) -> JSONResponse:
    return problem(409, "conflicting change, nothing saved; try again")


async def _unreachable(_: Request, exc: Exception) -> JSONResponse:
    return problem(503, "database unavailable; nothing saved")


async def _http(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    response = problem(exc.status_code, str(exc.detail))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(IdempotencyConflict, _reused_key)  # before its base class
    app.add_exception_handler(OperatorError, _operator)
    app.add_exception_handler(ValueTooLong, _too_long)
    app.add_exception_handler(IntegrityError, _conflict)
    app.add_exception_handler(DBAPIError, _unreachable)
    app.add_exception_handler(HTTPException, _http)
