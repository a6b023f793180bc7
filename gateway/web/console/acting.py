"""Running a console form's action: the same service as the API, inside a savepoint of
the request's transaction, so a refusal (the rules' one line) is shown on the page and
changes nothing, while the request still commits what it must (nothing else)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar
from urllib.parse import urlencode

from fastapi.responses import RedirectResponse
from pydantic import BaseModel, ValidationError
from sqlalchemy.exc import IntegrityError

from gateway.errors import OperatorError
from gateway.web.console.auth import Viewer
from storage.types import ValueTooLong

T = TypeVar("T")
B = TypeVar("B", bound=BaseModel)


@dataclass(frozen=True)
class Outcome(Generic[T]):
    value: T | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


async def attempt(me: Viewer, work: Callable[[], Awaitable[T]]) -> Outcome[T]:
    savepoint = await me.session.begin_nested()
    try:
        value = await work()
    except (OperatorError, ValueTooLong) as exc:
        await savepoint.rollback()
        return Outcome(error=str(exc))
    except IntegrityError:
        await savepoint.rollback()
        return Outcome(error="conflicting change, nothing saved; try again")
    await savepoint.commit()
    return Outcome(value)


def parse(model: type[B], data: dict[str, object]) -> B:
    """A form validated by the API's own model; the first problem as one line."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "form"
        raise OperatorError(f"{where}: {first['msg']}") from None


def done(path: str, message: str) -> RedirectResponse:
    """Post, then redirect, then get: a reload never repeats the action."""
    sep = "&" if "?" in path else "?"
    return RedirectResponse(f"{path}{sep}{urlencode({'ok': message[:300]})}", status_code=303)
