"""The structured log: JSON or key=value by configuration, times in the venue's zone with
the offset, the fields bound around a heat or passed with a line, third-party loggers at
warning (no Alembic lines when the database is migrated at a start)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo

import pytest
from structlog.contextvars import bound_contextvars

from gateway.app.database import upgrade
from gateway.app.logs import configure_logging
from gateway.app.settings import LogSection, Settings, VenueSection


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """configure_logging replaces the root handlers: give pytest's back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in ("alembic", "uvicorn", "asyncio")}
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    for name, old in levels.items():
        logging.getLogger(name).setLevel(old)


def _configured(
    fmt: Literal["json", "kv"],
    zone: str = "Africa/Johannesburg",
    level: Literal["DEBUG", "INFO"] = "INFO",
) -> io.StringIO:
    stream = io.StringIO()
    # Constructed: Settings() would put this run's REELGATE_* over the sections given.
    log, venue = LogSection(format=fmt, level=level), VenueSection(time_zone=zone)
    settings = Settings.model_construct(log=log, venue=venue)
    configure_logging(settings, stream=stream)
    return stream


def test_json_lines_parse_with_the_zone_offset_and_the_bound_fields() -> None:
    stream = _configured("json")
    with bound_contextvars(bank="A", heat=12, run=34):
        logging.getLogger("reelgate.test").info(
            "heat run %s: %s", 34, "running", extra={"machine": "A07", "account": "thandi"}
        )
    line = json.loads(stream.getvalue().strip())
    assert line["event"] == "heat run 34: running"
    assert line["level"] == "info"
    assert line["logger"] == "reelgate.test"
    assert (line["bank"], line["heat"], line["run"]) == ("A", 12, 34)
    assert (line["machine"], line["account"]) == ("A07", "thandi")
    stamp = datetime.fromisoformat(line["time"])
    assert line["time"].endswith("+02:00")  # Johannesburg keeps no summer time
    assert stamp.utcoffset() == ZoneInfo("Africa/Johannesburg").utcoffset(stamp)


def test_key_value_lines_lead_with_time_level_logger_event() -> None:
    stream = _configured("kv", zone="America/New_York")
    with bound_contextvars(bank="B"):
        logging.getLogger("reelgate.test").warning("lease lost", extra={"token": 7})
    line = stream.getvalue().strip()
    fields = dict(part.split("=", 1) for part in line.split(" ") if "=" in part)
    assert line.startswith("time=")
    assert fields["level"] == "warning"
    assert fields["logger"] == "reelgate.test"
    assert fields["bank"] == "B"
    assert fields["token"] == "7"
    stamp = datetime.fromisoformat(fields["time"])
    assert stamp.utcoffset() == ZoneInfo("America/New_York").utcoffset(stamp)
    assert fields["time"][-6] in "+-"  # the offset is written out


def test_bound_fields_end_with_their_block() -> None:
    stream = _configured("json")
    with bound_contextvars(bank="A"):
        pass
    logging.getLogger("reelgate.test").info("after")
    assert "bank" not in json.loads(stream.getvalue().strip())


def test_exceptions_are_kept_in_the_line() -> None:
    stream = _configured("json")
    try:
        raise RuntimeError("link gone")
    except RuntimeError:
        logging.getLogger("reelgate.test").exception("tick failed")
    line = json.loads(stream.getvalue().strip())
    assert "RuntimeError: link gone" in line["exception"]


def test_third_party_loggers_are_held_at_warning() -> None:
    stream = _configured("kv", level="DEBUG")
    logging.getLogger("uvicorn.access").info("GET /api/v1/banks 200")
    logging.getLogger("amqtt.broker").info("client connected")
    logging.getLogger("asyncio").debug("poll took 0.2 s")
    logging.getLogger("aiomqtt").warning("broker gone")
    logging.getLogger("reelgate.test").debug("ours at debug")
    out = stream.getvalue()
    assert "GET /api" not in out
    assert "client connected" not in out
    assert "poll took" not in out
    assert "broker gone" in out
    assert "ours at debug" in out


async def test_no_alembic_lines_when_the_database_is_migrated_at_start(tmp_path: Path) -> None:
    stream = _configured("kv")
    before, after = await upgrade(f"sqlite:///{tmp_path / 'fresh.db'}")
    assert before is None
    assert after
    assert "alembic" not in stream.getvalue()
