"""Reading a signage event stream in tests (httpx + httpx-sse over a real socket)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from httpx_sse import ServerSentEvent


async def next_event(events: AsyncIterator[ServerSentEvent]) -> tuple[str, Any]:
    """One SSE event as (event name, decoded data), "message" when unnamed; 5 s at most."""
    async with asyncio.timeout(5):
        event = await anext(events)
    return event.event, json.loads(event.data)
