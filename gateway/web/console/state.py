"""The console's share of the application state: templates, the floor control and the
live feed (both set by the process that drives the machines, when it does)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import Request

from gateway.web.console.control import FloorControl
from gateway.web.console.render import Pages
from gateway.web.fanout import FanoutFeed


@dataclass
class Console:
    pages: Pages
    control: FloorControl | None = None
    feed: FanoutFeed | None = None

    def retained(self) -> dict[str, Any]:
        return {} if self.feed is None else self.feed.retained()


def console_of(request: Request) -> Console:
    found: Console = request.app.state.console
    return found
