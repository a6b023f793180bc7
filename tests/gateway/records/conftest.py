"""The tournament tests' desk (a floor, the services one transaction per action)."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.db import make_sessionmaker

from ..tournament.conftest import Desk


@pytest.fixture
async def desk(engine: AsyncEngine) -> Desk:
    d = Desk(make_sessionmaker(engine))
    await d.floor("A", 6)
    return d
