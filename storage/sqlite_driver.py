"""SQLite through aiosqlite with one hand-off to the connection's thread per statement.

aiosqlite runs every sqlite3 call on the connection's own thread.  SQLAlchemy's adapter
makes four such calls for a query (open a cursor, execute, fetch the rows, close the
cursor) and three for a change; each is a round trip to that thread and back (a queue
put, a thread wake-up, a wake-up of the event loop).  SQLite's own work for one of our
statements is tens of microseconds; the hand-offs cost far more, and on a busy machine
each waits for the scheduler.  This adapter does the four steps in one hand-off: the
same statements, on the same connection and thread, in the same transaction, with the
rows fetched in full as before (no server-side cursor: those keep the stock adapter).
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import aiosqlite
from sqlalchemy.connectors.asyncio import AsyncAdapt_dbapi_connection
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.util import EMPTY_DICT
from sqlalchemy.util.concurrency import await_

# (description, rows, rowcount, lastrowid) of one statement, read on the sqlite3 thread.
Outcome = tuple[Any, list[Any], int, int | None]


def _run(connection: aiosqlite.Connection, operation: str, parameters: Any, many: bool) -> Outcome:
    """On the connection's thread: execute, fetch every row, close the cursor."""
    cursor: sqlite3.Cursor = connection._conn.cursor()
    try:
        if many:
            cursor.executemany(operation, parameters)
        elif parameters is None:
            cursor.execute(operation)
        else:
            cursor.execute(operation, parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else []
        return description, rows, cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


class OneHopCursor(AsyncAdapt_aiosqlite_cursor):
    """A buffered cursor whose every statement is a single call on the sqlite3 thread."""

    __slots__ = ("_arraysize", "_description", "_lastrowid", "_rowcount")

    def __init__(self, adapt_connection: AsyncAdapt_dbapi_connection) -> None:
        # No aiosqlite cursor is opened here (that was a hand-off of its own).
        self._adapt_connection = adapt_connection
        self._connection = adapt_connection._connection
        self._cursor = None  # type: ignore[assignment]
        self._soft_closed_memoized = EMPTY_DICT
        self._rows = deque()
        self._description: Any = None
        self._rowcount = -1
        self._lastrowid: int | None = None
        self._arraysize = 1

    @property
    def description(self) -> Any:
        return self._description

    @property
    def rowcount(self) -> int:
        return self._rowcount

    @property
    def lastrowid(self) -> int:
        return self._lastrowid  # type: ignore[return-value]

    @property
    def arraysize(self) -> int:
        return self._arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._arraysize = value

    async def _async_soft_close(self) -> None:
        """The sqlite3 cursor is closed already; the rows stay buffered."""

    def execute(self, operation: Any, parameters: Any = None) -> Any:
        try:
            return await_(self._hop(operation, parameters, many=False))
        except Exception as error:
            self._adapt_connection._handle_exception(error)

    def executemany(self, operation: Any, seq_of_parameters: Any) -> Any:
        try:
            return await_(self._hop(operation, seq_of_parameters, many=True))
        except Exception as error:
            self._adapt_connection._handle_exception(error)

    async def _hop(self, operation: Any, parameters: Any, *, many: bool) -> None:
        connection: aiosqlite.Connection = self._connection  # type: ignore[assignment]
        # aiosqlite's own queue to its thread (every one of its calls goes through it)
        on_thread: Callable[..., Awaitable[Outcome]] = connection._execute
        async with self._adapt_connection._execute_mutex:
            outcome = await on_thread(_run, connection, operation, parameters, many)
        self._description, rows, self._rowcount, self._lastrowid = outcome
        self._rows = deque(rows)


class OneHopConnection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ()
    _cursor_cls = OneHopCursor


class OneHopDBAPI(AsyncAdapt_aiosqlite_dbapi):
    """The DBAPI module SQLAlchemy is given (``create_async_engine(module=...)``)."""

    def connect(self, *arg: Any, **kw: Any) -> OneHopConnection:
        stock = super().connect(*arg, **kw)
        return OneHopConnection(self, stock._connection)


def dbapi() -> OneHopDBAPI:
    return OneHopDBAPI(aiosqlite, sqlite3)
