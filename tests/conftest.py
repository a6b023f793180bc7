"""Shared fixtures.

Database tests run on SQLite always, and on PostgreSQL as well when
``REELGATE_DATABASE_URL`` names one (CI sets it).  Each PostgreSQL test gets its own
schema, dropped afterwards, so tests (and parallel sessions) never see each other's rows.

The audit chain needs a key: one pair of test keys is made per session, named in
``REELGATE_AUDIT_KEY_FILE`` / ``REELGATE_SIGNING_KEY_FILE`` (so every command and
subprocess finds it) and bound to every ``engine``.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.records import chain
from gateway.records.keys import AUDIT_KEY_ENV, SIGNING_KEY_ENV, KeyPaths, create_keys
from storage.audit import ChainKeys, bind_keys
from storage.db import Base, make_engine

POSTGRES_URL = os.environ.get("REELGATE_DATABASE_URL", "")
MQTT_URL = os.environ.get("REELGATE_MQTT_URL", "")

_BACKENDS = ["sqlite"] + (["postgresql"] if POSTGRES_URL.startswith("postgresql") else [])


@pytest.fixture(scope="session", autouse=True)
def record_keys(tmp_path_factory: pytest.TempPathFactory) -> ChainKeys:
    """The session's audit and signing keys, named in the environment."""
    paths = KeyPaths.in_directory(tmp_path_factory.mktemp("record-keys"))
    create_keys(paths)
    os.environ[AUDIT_KEY_ENV] = str(paths.audit_key)
    os.environ[SIGNING_KEY_ENV] = str(paths.signing_key)
    return chain.load(paths)


@pytest.fixture(scope="session", autouse=True)
def own_site() -> None:
    """The broker's site level for this run's ``serve`` and ``signage`` processes.

    They take ``venue.name`` ("venue") for their MQTT tree; on one Mosquitto, the workers
    of ``pytest -n`` would otherwise publish each other's heats and answer each other's
    cards."""
    os.environ.setdefault("REELGATE_VENUE_NAME", f"t{uuid.uuid4().hex[:10]}")


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """Undo what an in-process ``serve`` or ``api`` did to the root logger.

    Those commands put one handler on the root bound to the ``sys.stderr`` of the moment,
    which under capture is the test's own stream, closed when the test ends; a later test's
    log line would then print a logging error into its captured output.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in logging.root.manager.loggerDict}
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    for handler in handlers:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(level)
    for name, old in levels.items():
        logging.getLogger(name).setLevel(old)


@pytest.fixture(params=_BACKENDS)
def db_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def _fresh_engine(backend: str, tmp_path: Path) -> tuple[AsyncEngine, str | None]:
    if backend == "sqlite":
        return make_engine(f"sqlite+aiosqlite:///{tmp_path / 'test.db'}"), None
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = make_engine(POSTGRES_URL)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    await admin.dispose()
    return make_engine(POSTGRES_URL, schema=schema), schema


@pytest.fixture
async def engine(
    db_backend: str, tmp_path: Path, record_keys: ChainKeys
) -> AsyncIterator[AsyncEngine]:
    """An empty database with every Reelgate table created, on each backend."""
    import storage.models  # noqa: F401  (registers every table on Base.metadata)

    eng, schema = await _fresh_engine(db_backend, tmp_path)
    bind_keys(eng, record_keys)
    async with eng.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    try:
        yield eng
    finally:
        await eng.dispose()
        if schema is not None:
            admin = make_engine(POSTGRES_URL)
            async with admin.begin() as conn:
                await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
            await admin.dispose()


@pytest.fixture
def mqtt_url() -> str:
    if not MQTT_URL:
        pytest.skip("REELGATE_MQTT_URL not set")
    return MQTT_URL


def _weight(item: pytest.Item) -> int:
    """Longest first: the night, then what is marked slow, then the other whole-process
    tests, then the rest.  Under ``pytest -n`` the workers take tests in this order, so
    the long ones start at once, side by side, instead of one worker ending the run alone."""
    path = item.path.as_posix()
    if "/tests/e2e/" in path:
        return 0
    if item.get_closest_marker("slow") is not None:
        return 1
    return 2 if "/tests/integration/" in path else 3


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Whole-process runs (``tests/integration``, ``tests/e2e``) are ``slow`` by where
    they live, so ``pytest -m "not slow"`` is the quick loop of unit tests."""
    for item in items:
        if _weight(item) < 3 and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
    items.sort(key=_weight)  # stable: within a weight, the files' own order
