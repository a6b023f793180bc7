"""The night's stage hands for :mod:`tests.e2e.test_night`: the host's command line as
real processes, the emulated floor (``reelgate emulate sas``) and ``reelgate serve`` in
their own processes, each line they print read by a pump thread; every wait is bounded.

The technician and the director work on the gateway host (``reelgate ...`` with the
database in ``REELGATE_DATABASE_URL``), a remote desk through ``--server`` with its token
in ``REELGATE_TOKEN``; dual control on the host reads the second person's password from
standard input, as documented (README, "Who made a change")."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
START_S = 60.0  # bound on a process's start-up on a loaded 2-core machine
COMMAND_S = 120.0  # bound on one command


def passwords() -> dict[str, str]:
    """Strong enough for the password policy (zxcvbn), one per account."""
    return {
        name: f"{name}-Night-Shift-{7311 + i}-orchid-tango"
        for i, name in enumerate(
            ("dana", "pieter", "naledi", "lee", "tumi", "thabo", "sam", "vusi")
        )
    }


class Lines:
    """A process's standard output, line by line, read by a thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self._q: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        out = proc.stdout
        assert out is not None

        def pump() -> None:  # ends when the process closes its output
            for line in out:
                self._q.put(line)

        threading.Thread(target=pump, daemon=True).start()

    def until(self, cond: Callable[[str], bool], within: float = START_S) -> str:
        deadline = time.monotonic() + within
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._q.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if cond(line):
                return line
        raise AssertionError(f"no such line in {within} s; seen {self.seen[-10:]}")


@dataclass
class Host:
    """The gateway host's shell: ``reelgate`` against the night's database."""

    database: str
    work: Path
    procs: list[subprocess.Popen[str]] = field(default_factory=list)

    def env(self, **extra: str) -> dict[str, str]:
        # No broker: the signs are read from serve's own feed (/signage/snapshot), and a
        # shared broker's retained topics are not the night's to write.
        env = {
            k: v for k, v in os.environ.items() if k not in ("REELGATE_TOKEN", "REELGATE_MQTT_URL")
        }
        env.update(
            PYTHONPATH=str(ROOT),
            REELGATE_DATABASE_URL=self.database,
            REELGATE_DESK="night",
        )
        env.update(extra)
        return env

    def run(
        self, *argv: str, stdin: str = "", ok: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "gateway", *argv],
            input=stdin, capture_output=True, text=True, cwd=self.work,
            env=env or self.env(), timeout=COMMAND_S,
        )  # fmt: skip
        if ok:
            assert done.returncode == 0, f"reelgate {' '.join(argv)}: {done.stderr}{done.stdout}"
        return done

    def json(self, *argv: str, stdin: str = "", env: dict[str, str] | None = None) -> Any:
        return json.loads(self.run(*argv, "--json", stdin=stdin, env=env).stdout)

    def start(self, *argv: str, env: dict[str, str] | None = None) -> Lines:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway", *argv],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, cwd=self.work, env=env or self.env(),
        )  # fmt: skip
        self.procs.append(proc)
        return Lines(proc)

    def stop_all(self) -> Iterator[int]:
        """SIGTERM each started process (a stopped one is continued first); its exit code."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=30)
            yield proc.returncode


def until(cond: Callable[[], Any], within: float, what: str, every: float = 0.5) -> Any:
    """Poll ``cond`` until it returns something true; bounded."""
    deadline = time.monotonic() + within
    got: Any = None
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(every)
    raise AssertionError(f"{what}: not reached in {within} s (last: {got!r})")


def console_standings(
    api: str, account: str, password: str, tournament: int
) -> list[tuple[str, int]]:
    """The director's console in Chromium: sign in through the login page (its CSRF token
    comes with the form), open the standings of ``tournament``; (player, credits) by place."""
    from playwright.sync_api import expect, sync_playwright

    from tests.browser import CHROMIUM, TABLET

    base = api.removesuffix("/api/v1") + "/console"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_context(viewport=TABLET).new_page()
            page.set_default_timeout(30_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{base}/login")
            page.get_by_label("Account").fill(account)
            page.get_by_label("Password").fill(password)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{base}/")
            page.get_by_role("navigation", name="Screens").get_by_role(
                "link", name="Standings"
            ).click()
            page.goto(f"{base}/standings?t={tournament}&stage=qualifying")
            rows = page.locator("#standings-table tbody tr[data-entry]")
            expect(rows.first).to_be_visible()
            found = [
                (
                    r.locator("td").nth(1).inner_text().strip(),
                    int(r.locator(".credits").inner_text()),
                )
                for r in rows.all()
            ]
            assert errors == [], f"the console threw: {errors}"
            return found
        finally:
            browser.close()


def machine_results(database: str) -> dict[str, int]:
    """Each machine's score as the gateway read it from the machine (the journal's
    ``heat_result``), by machine id."""
    import asyncio

    from sqlalchemy import select

    from storage.db import make_engine
    from storage.journal import HeatResult

    async def go() -> dict[str, int]:
        url = database.replace("sqlite://", "sqlite+aiosqlite://").replace(
            "postgresql://", "postgresql+asyncpg://"
        )
        engine = make_engine(url)
        try:
            async with engine.connect() as conn:
                rows = (await conn.execute(select(HeatResult.machine_id, HeatResult.score))).all()
                return {m: s for m, s in rows}
        finally:
            await engine.dispose()

    return asyncio.run(go())
