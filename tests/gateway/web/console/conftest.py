"""The console over the API's seeded desk (:mod:`tests.gateway.web.api.conftest`): one
account per role, bank A with a trap-marked machine, tournament "Spring", Super 9
sessions.  :func:`signed_in` signs a client in through the console's own form
(:func:`sign_in_form`: its page, then the POST with the page's login CSRF token)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from tests.gateway.web.api.conftest import PASSWORD, Desk, cheap_argon2, desk

__all__ = ["Desk", "cheap_argon2", "csrf_of", "desk", "sign_in_form", "signed_in"]


@asynccontextmanager
async def signed_in(d: Desk, account: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client of its own (its own cookies), signed in to the console as ``account``."""
    transport = httpx.ASGITransport(app=d.client._transport.app)  # type: ignore[attr-defined]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        r = await sign_in_form(client, {"name": account, "password": PASSWORD})
        assert r.status_code == 303, r.text
        yield client


async def sign_in_form(client: httpx.AsyncClient, data: dict[str, str]) -> httpx.Response:
    """The sign-in form as a browser sends it: its page first (the login CSRF token, in
    the form and in a cookie), then the POST with the token."""
    page = await client.get("/console/login")
    assert page.status_code == 200, page.text
    return await client.post(
        "/console/login", data={"next": "/console/", **data, "csrf": csrf_of(page.text)}
    )


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None, "no form on the page"
    return found.group(1)
