"""The long-running commands' log: one structured line per event, on standard error.

Every logger in the project is a plain :mod:`logging` logger; :func:`configure_logging`
puts one handler on the root whose formatter is structlog's
:class:`~structlog.stdlib.ProcessorFormatter`, so every line (ours and the libraries')
is rendered the same way: JSON (``[log] format = "json"``) or ``key=value``
(``"kv"``, logfmt), each with ``time`` in the venue's zone with its UTC offset
(``[venue] time_zone``), ``level``, ``logger`` and ``event``, then the fields the
gateway knows at that point: those bound for the task (``bank``, ``heat``, ``run``
around a heat, ``account`` around an API request: :func:`structlog.contextvars.bound_contextvars`)
and those passed with the line (``extra={"machine": ...}``).

Third-party loggers are held at warning (:data:`QUIET`): Alembic's per-revision lines,
the brokers', uvicorn's and the HTTP client's chatter and asyncio's debug notes say
nothing an operator acts on.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from datetime import datetime
from typing import IO, TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import structlog

if TYPE_CHECKING:
    from gateway.app.settings import Settings

QUIET = (
    "alembic",
    "amqtt",
    "aiomqtt",
    "asyncio",
    "uvicorn",
    "uvicorn.access",
    "uvicorn.error",
    "httpx",  # the CLI's --server client: one line per request
    "httpcore",
    "sqlalchemy",
    "pysnmp",
    "transitions",  # amqtt's state machines
)
FIRST = ["time", "level", "logger", "event"]
_DROPPED = ("color_message", "_from_structlog")  # uvicorn's coloured copy of the message


def configure_logging(
    settings: Settings,
    *,
    level: str | None = None,
    stream: IO[str] | None = None,
) -> logging.Handler:
    """Route every log line through one structured handler (see the module); returns it."""
    zone = ZoneInfo(settings.venue.time_zone)
    name = (level or settings.log.level).upper()
    threshold = logging.getLevelNamesMapping().get(name, logging.INFO)
    handler: logging.Handler = logging.StreamHandler(stream) if stream else _Stderr()
    handler.setFormatter(formatter(settings.log.format, zone))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(threshold)
    for noisy in QUIET:
        logging.getLogger(noisy).setLevel(max(logging.WARNING, threshold))
    return handler


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to the standard error of the moment, not of the hour it was configured.

    A command run in-process (tests, an embedding host) may swap ``sys.stderr`` after
    configuring the log; a handler bound to the old stream would then write to a closed file.
    """

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def formatter(fmt: str, zone: ZoneInfo) -> logging.Formatter:
    """The formatter for ``fmt`` (``json`` or ``kv``) stamping times in ``zone``."""

    def stamp(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        record: logging.LogRecord | None = event.get("_record")
        moment = datetime.fromtimestamp(record.created, zone) if record else datetime.now(zone)
        event["time"] = moment.isoformat(timespec="milliseconds")
        return event

    def drop(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        for key in _DROPPED:
            event.pop(key, None)
        return event

    renderer: Any = (
        structlog.processors.JSONRenderer(default=str)
        if fmt == "json"
        else structlog.processors.LogfmtRenderer(key_order=FIRST, drop_missing=True)
    )
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name,
            structlog.stdlib.ExtraAdder(),
            stamp,
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            drop,
            structlog.processors.format_exc_info,
            renderer,
        ],
    )
