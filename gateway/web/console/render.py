"""Rendering console pages: the Jinja2 environment (autoescaped), the navigation each
role sees, and the filters the templates share (money, venue time)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import allowed
from gateway.accounts.service import Principal
from gateway.web.api.auth import api_of

TEMPLATES = Path(__file__).with_name("templates")
STATIC = Path(__file__).with_name("static")
DEFAULT_ZONE = "Africa/Johannesburg"


@dataclass(frozen=True)
class NavItem:
    key: str
    label: str
    href: str
    permission: P | None


# The console's screens, in the order of the menu; each shows only to a role allowed it.
NAV: tuple[NavItem, ...] = (
    NavItem("floor", "Floor", "/console/floor", P.BANK_READ),
    NavItem("heat", "Live heat", "/console/heat", P.HEAT_DIRECT),
    NavItem("tournaments", "Tournaments", "/console/tournaments", P.TOURNAMENT_READ),
    NavItem("schedule", "Schedule", "/console/schedule", P.HEAT_READ),
    NavItem("desk", "Registration desk", "/console/desk", P.PLAYER_READ),
    NavItem("cashup", "Cash-up", "/console/cashup", P.CASHUP_READ),
    NavItem("players", "Players", "/console/players", P.PLAYER_READ),
    NavItem("cards", "Cards at machines", "/console/cards", P.PLAYER_READ),
    NavItem("walkup", "Walk-up", "/console/walkup", P.HEAT_READ),
    NavItem("standings", "Standings", "/console/standings", P.HEAT_READ),
    NavItem("finals", "Finals", "/console/finals", P.HEAT_READ),
    NavItem("prizes", "Prizes", "/console/prizes", P.TOURNAMENT_READ),
    NavItem("teams", "Teams", "/console/teams", P.TOURNAMENT_READ),
    NavItem("super9", "Super 9", "/console/super9", P.SUPER9_READ),
    NavItem("pending", "Approvals", "/console/pending", None),
    NavItem("audit", "Decisions & audit", "/console/audit", P.AUDIT_READ),
    NavItem("accounts", "Accounts", "/console/accounts", P.ACCOUNTS_MANAGE),
)


def nav_for(who: Principal) -> list[NavItem]:
    return [n for n in NAV if n.permission is None or allowed(who.role, n.permission)]


def masked(number: str | None) -> str:
    """An ID or card number as any screen shows it: its last 4 characters only (the full
    number is the desk's to key, not every role's to read)."""
    if not number:
        return "-"
    return f"…{number[-4:]}" if len(number) > 4 else number


def rand(cents: int | None) -> str:
    """Money as the desk reads it: R 1 234.50 (cents are integers everywhere)."""
    if cents is None:
        return "-"
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(int(cents)), 100)
    return f"{sign}R {whole:,}.{part:02d}".replace(",", " ")


class Pages:
    """The templates and the venue's zone (times are shown in the venue's time)."""

    def __init__(self, zone: str = DEFAULT_ZONE) -> None:
        self.zone = ZoneInfo(zone)
        self.templates = Jinja2Templates(directory=str(TEMPLATES))
        env = self.templates.env
        env.filters["rand"] = rand
        env.filters["masked"] = masked
        env.filters["venue"] = self.venue_time
        env.globals["nav_for"] = nav_for

    def venue_time(self, moment: datetime | str | None, fmt: str = "%a %d %b %H:%M") -> str:
        if moment is None:
            return "-"
        if isinstance(moment, str):
            try:
                moment = datetime.fromisoformat(moment)
            except ValueError:
                return str(moment)
        if moment.tzinfo is None:
            return moment.strftime(fmt)
        return moment.astimezone(self.zone).strftime(fmt)

    def render(
        self,
        request: Request,
        template: str,
        who: Principal | None,
        *,
        status: int = 200,
        active: str = "",
        **context: Any,
    ) -> HTMLResponse:
        # A training database (read by the request's dependency, or by the sign-in page):
        # every page says so.
        training = bool(api_of(request).training)
        context.update(who=who, active=active, zone=self.zone.key, training=training)
        context.setdefault("csrf", getattr(who, "csrf", ""))
        context.setdefault("ok", request.query_params.get("ok", "")[:300])
        context.setdefault("error", "")
        response = self.templates.TemplateResponse(
            request, template, context, status_code=status, headers=_HEADERS
        )
        return response


# Pages are per account: never cached; never framed (clickjacking a confirm button).
_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "Referrer-Policy": "same-origin",
}
