"""A private Mosquitto process on a free loopback port (tests that restart the broker or
need their own TLS and password settings)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import time
from pathlib import Path


class Mosquitto:
    """A private Mosquitto on a free loopback port, for tests that restart the broker."""

    def __init__(self, workdir: Path, extra: str = "allow_anonymous true\n") -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.conf = workdir / "mosquitto.conf"
        # "user root": started as root, mosquitto would otherwise switch to its own
        # user and could not read the test's private files.
        self.conf.write_text(f"user root\nlistener {self.port} 127.0.0.1\n{extra}")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["mosquitto", "-c", str(self.conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 5
        while True:  # bounded: until the port accepts or 5 s
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("mosquitto did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(5)
            self.proc = None

    async def restart(self) -> None:
        await asyncio.to_thread(self.stop)
        await asyncio.to_thread(self.start)
