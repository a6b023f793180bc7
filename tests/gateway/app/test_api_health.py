"""``reelgate api`` (the API alone, on a desk host): its own ``/healthz``, ``/readyz``
(the database only) and ``/metrics``, on a real socket on loopback."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path
from urllib.error import HTTPError
from urllib.request import urlopen

from gateway.app.cli import main
from gateway.app.commands import api as api_command


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urlopen(url, timeout=10) as response:  # loopback only
            return int(response.status), response.read()
    except HTTPError as exc:
        return exc.code, exc.read()


async def test_api_alone_is_ready_while_its_database_is(tmp_path: Path) -> None:
    file = tmp_path / "desk.db"
    db = f"sqlite+aiosqlite:///{file}"
    assert await asyncio.to_thread(main, ["db", "upgrade", "--database", db]) == 0
    parser = argparse.ArgumentParser()
    api_command.register(parser.add_subparsers())
    args = parser.parse_args(["api", "--database", db, "--http", "127.0.0.1:0"])
    http = await api_command.start_http(args)
    assert http is not None
    base = http.url.removesuffix("/api/v1")
    try:
        status, body = await asyncio.to_thread(_get, f"{base}/readyz")
        assert status == 200
        assert set(json.loads(body)["checks"]) == {"database", "audit witness"}
        assert (await asyncio.to_thread(_get, f"{base}/healthz"))[0] == 200

        os.replace(file, tmp_path / "aside.db")
        status, body = await asyncio.to_thread(_get, f"{base}/readyz")
        assert status == 503
        assert "is gone" in json.loads(body)["checks"]["database"]["detail"]
        os.replace(tmp_path / "aside.db", file)
        assert (await asyncio.to_thread(_get, f"{base}/readyz"))[0] == 200

        status, metrics = await asyncio.to_thread(_get, f"{base}/metrics")
        assert status == 200
        text = metrics.decode()
        assert 'route="/readyz",status="503"' in text
        assert "reelgate_event_loop_lag_seconds" in text
        assert "reelgate_machine_polls_total" not in text  # no machines on a desk host
    finally:
        await http.close()
