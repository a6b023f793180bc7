"""The signage boards on FastAPI: pages rendered by Jinja2, their live parts by our script.

=====================================  ===================================================
``GET /signage/``                      the floor board: the current heat and Super 9, and
                                       links to every board the feed knows
``GET /signage/bank/{bank}``           one bank's heat, its tournament leaderboard beside it
``GET /signage/tournament/{id}``       a tournament's leaderboard: qualifying cut, prizes
``GET /signage/super9``                the Super 9 board (``?session=ID`` pins one)
``GET /signage/events``                Server-Sent Events (:mod:`.stream`)
``GET /signage/snapshot``              the retained values as JSON
``GET /signage/healthz``               200; 503 while the feed's source is disconnected
``GET /signage/theme.css``             the venue's colours; ``/signage/logo`` its logo
``GET /signage/static/{file}``         ``signage.css``, ``signage.js``, ``favicon.svg``
=====================================  ===================================================

Every board takes ``?layout=landscape|portrait|topper`` (1920×1080, 1080×1920, a bank
topper such as 1920×360 or 3840×540); an unknown layout is a 422 naming it.  The server
renders each board's frame (branding, titles, footer, the venue's clock at render time);
``signage.js`` fills in the live values from the stream.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import jinja2
from fastapi import APIRouter, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from starlette.responses import FileResponse, Response

from gateway.web.fanout import FanoutFeed
from gateway.web.signage.settings import SignageSettings
from gateway.web.signage.stream import SECURITY_HEADERS, Streams

HERE = Path(__file__).parent
STATIC = HERE / "static"
STATIC_FILES = {
    "signage.css": "text/css",
    "signage.js": "text/javascript",
    "favicon.svg": "image/svg+xml",  # a browser asks for one; a 404 is a console error
}
PREFIX = "/signage"

_templates = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"),
    autoescape=True,  # every feed or venue string is text, never markup
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)

Name = Annotated[str, PathParam(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]


class Layout(StrEnum):
    LANDSCAPE = "landscape"  # 1920×1080
    PORTRAIT = "portrait"  # 1080×1920
    TOPPER = "topper"  # a strip over a bank: 1920×360, 3840×540


LayoutQuery = Annotated[Layout, Query(description="landscape, portrait or topper")]
PageQuery = Annotated[float | None, Query(ge=2, le=120, description="seconds per page")]


class Signage:
    """One app's signage: the feed, the venue's settings, the open streams."""

    def __init__(self, feed: FanoutFeed, settings: SignageSettings, ping_interval: float) -> None:
        self.feed = feed
        self.settings = settings
        self.streams = Streams(feed, ping_interval)

    def page(self, template: str, layout: Layout, page_s: float | None, **board: Any) -> Response:
        s = self.settings
        now = datetime.now(UTC).astimezone(s.zone)
        html = _templates.get_template(template).render(
            settings=s,
            layout=layout.value,
            page_seconds=page_s or s.page_seconds,
            clock=now.strftime("%H:%M"),
            **board,
        )
        return HTMLResponse(html, headers={"Cache-Control": "no-cache", **SECURITY_HEADERS})

    def boards(self) -> dict[str, list[str]]:
        """The banks, tournaments and Super 9 sessions the retained feed names."""
        banks: set[str] = set()
        tournaments: set[str] = set()
        for topic, payload in self.feed.retained().items():
            parts = topic.split("/")
            if parts[0] == "heat" and parts[-1] == "state" and isinstance(payload.get("bank"), str):
                banks.add(payload["bank"])
            if parts[0] == "bank" and len(parts) == 3:
                banks.add(parts[1])
            if parts[0] == "tournament" and len(parts) == 3:
                tournaments.add(parts[1])
        return {"banks": sorted(banks), "tournaments": sorted(tournaments)}

    def health(self) -> Response:
        f = self.feed
        ok = f.upstream != "disconnected"
        body = {
            "ok": ok,
            "upstream": f.upstream,
            "topics": f.stats.retained_topics,
            "clients": f.stats.clients,
            "published": f.stats.published,
            "slow_clients": f.stats.slow_clients,
            "evicted": f.stats.evicted,
            "now": time.time(),
        }
        return JSONResponse(body, status_code=200 if ok else 503)

    def logo(self) -> Response:
        s = self.settings
        if s.logo is None or not s.logo.is_file():
            return Response("no logo configured", status_code=404)
        return FileResponse(s.logo, media_type=s.logo_type, headers=dict(SECURITY_HEADERS))

    @staticmethod
    def static(name: str) -> Response:
        kind = STATIC_FILES.get(name)  # a fixed list: no path ever reaches the disk
        if kind is None:
            return Response("not found", status_code=404)
        return FileResponse(STATIC / name, media_type=kind, headers={"Cache-Control": "no-cache"})

    def theme(self) -> str:
        body = "".join(f"--{name}:{value};" for name, value in self.settings.colours.items())
        return f":root{{{body}}}\n" if body else "/* the venue keeps the default colours */\n"


def signage_router(
    feed: FanoutFeed,
    settings: SignageSettings | None = None,
    *,
    ping_interval: float = 15.0,
) -> tuple[APIRouter, Signage]:
    """The signage routes (under ``/signage``) and their state; ``Signage.streams.end_all``
    ends the open streams when the app stops."""
    sign = Signage(feed, settings or SignageSettings(), ping_interval)
    router = APIRouter(prefix=PREFIX, tags=["signage"], include_in_schema=False)

    @router.get("/")
    async def floor(layout: LayoutQuery = Layout.LANDSCAPE, page: PageQuery = None) -> Response:
        return sign.page("floor.html.j2", layout, page, board="floor", **sign.boards())

    @router.get("/bank/{bank}")
    async def bank(
        bank: Name, layout: LayoutQuery = Layout.LANDSCAPE, page: PageQuery = None
    ) -> Response:
        return sign.page("bank.html.j2", layout, page, board="bank", bank=bank)

    @router.get("/tournament/{ref}")
    async def tournament(
        ref: Name, layout: LayoutQuery = Layout.LANDSCAPE, page: PageQuery = None
    ) -> Response:
        return sign.page("tournament.html.j2", layout, page, board="tournament", tournament=ref)

    @router.get("/super9")
    async def super9(layout: LayoutQuery = Layout.LANDSCAPE, page: PageQuery = None) -> Response:
        return sign.page("super9.html.j2", layout, page, board="super9")

    @router.get("/events")
    async def events(request: Request) -> Response:
        client = request.client
        return sign.streams.response(client.host if client else "?")

    @router.get("/snapshot")
    async def snapshot() -> Response:
        return Response(
            sign.feed.snapshot_json(),
            media_type="application/json",
            headers={"Cache-Control": "no-store"},
        )

    @router.get("/healthz")
    async def health() -> Response:
        return sign.health()

    @router.get("/theme.css")
    async def theme() -> Response:
        return Response(sign.theme(), media_type="text/css", headers={"Cache-Control": "no-cache"})

    @router.get("/logo")
    async def logo() -> Response:
        return sign.logo()

    @router.get("/static/{name}")
    async def static(name: str) -> Response:
        return sign.static(name)

    return router, sign


def mount_signage(
    app: FastAPI,
    feed: FanoutFeed,
    settings: SignageSettings | None = None,
    *,
    ping_interval: float = 15.0,
) -> Signage:
    """Add the signage boards to ``app`` (the API's app, or one of their own)."""
    router, sign = signage_router(feed, settings, ping_interval=ping_interval)
    app.include_router(router)
    return sign


def create_signage_app(
    feed: FanoutFeed,
    settings: SignageSettings | None = None,
    *,
    ping_interval: float = 15.0,
) -> tuple[FastAPI, Signage]:
    """An app with the signage boards only (``reelgate signage``, ``--signage-port``);
    ``/`` sends a screen to the floor board."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    sign = mount_signage(app, feed, settings, ping_interval=ping_interval)

    @app.get("/", include_in_schema=False)
    async def root() -> Response:
        return RedirectResponse(f"{PREFIX}/", status_code=307)

    return app, sign
