"""A real headless Chromium driven over the DevTools protocol (CDP), for the page tests.

``chromium --headless --dump-dom`` / ``--screenshot`` capture once, at an arbitrary
moment, and ``--virtual-time-budget`` never ends on a page that holds an open
Server-Sent-Events stream (virtual time waits for pending fetches).  Driving the same
browser over CDP lets a test wait until the page shows what it expects (bounded), read
the rendered DOM, take the screenshot, and watch the page reconnect.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import shutil
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = os.environ.get("REELGATE_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
]


def available() -> bool:
    return Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)


class BrowserError(RuntimeError):
    pass


class Chromium:
    """One headless browser with one page."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        http: aiohttp.ClientSession,
        ws: aiohttp.ClientWebSocketResponse,
        profile: Path,
    ) -> None:
        self.process = process
        self._http = http
        self._ws = ws
        self._profile = profile
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()

    @classmethod
    async def launch(cls, profile: Path, *, width: int = 1920, height: int = 1080) -> Chromium:
        await asyncio.to_thread(profile.mkdir, parents=True, exist_ok=True)
        process = await asyncio.create_subprocess_exec(
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        http = aiohttp.ClientSession()
        try:
            port = await _devtools_port(profile, process)
            async with http.get(f"http://127.0.0.1:{port}/json/list") as response:
                targets = await response.json()
            page = next(t for t in targets if t.get("type") == "page")
            ws = await http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=64 << 20)
        except BaseException:
            await http.close()
            await _stop(process)
            raise
        browser = cls(process, http, ws, profile)
        await browser.send("Page.enable")
        await browser.send("Runtime.enable")
        # A sign's panel, exactly: --window-size counts the (invisible) browser frame too.
        await browser.send(
            "Emulation.setDeviceMetricsOverride",
            width=width, height=height, deviceScaleFactor=1, mobile=False,
        )  # fmt: skip
        return browser

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        async with self._lock:
            ident = next(self._ids)
            await self._ws.send_str(json.dumps({"id": ident, "method": method, "params": params}))
            async with asyncio.timeout(30):
                while True:  # bounded by the timeout; events are skipped
                    message = await self._ws.receive()
                    if message.type is not aiohttp.WSMsgType.TEXT:
                        raise BrowserError(f"devtools connection closed during {method}")
                    data = json.loads(message.data)
                    if data.get("id") == ident:
                        break
        if "error" in data:
            raise BrowserError(f"{method}: {data['error']}")
        result: dict[str, Any] = data.get("result", {})
        return result

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", url=url)

    async def evaluate(self, expression: str) -> Any:
        result = await self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait_for(self, expression: str, *, within: float = 15.0) -> Any:
        """Poll ``expression`` until it is truthy (bounded by ``within`` seconds)."""
        last: Any = None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while loop.time() < deadline:
            with contextlib.suppress(BrowserError):  # page still loading
                last = await self.evaluate(expression)
                if last:
                    return last
            await asyncio.sleep(0.1)
        raise BrowserError(f"page never satisfied {expression!r} (last value {last!r})")

    async def dom(self) -> str:
        """The rendered document, as ``--dump-dom`` prints it."""
        html = await self.evaluate("document.documentElement.outerHTML")
        assert isinstance(html, str)
        return html

    async def screenshot(self, path: Path) -> bytes:
        result = await self.send("Page.captureScreenshot", format="png")
        data = base64.b64decode(result["data"])
        await asyncio.to_thread(path.write_bytes, data)
        return data

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self._ws.close()
        await self._http.close()
        await _stop(self.process)
        shutil.rmtree(self._profile, ignore_errors=True)


async def _devtools_port(profile: Path, process: asyncio.subprocess.Process) -> int:
    """Chromium writes the port it picked (``--remote-debugging-port=0``) to a file."""
    marker = profile / "DevToolsActivePort"
    for _ in range(300):  # up to 30 s for a cold start on a busy CI machine
        if process.returncode is not None:
            raise BrowserError(f"chromium exited with {process.returncode}")
        if marker.is_file():
            first = marker.read_text().split("\n", 1)[0].strip()
            if first.isdigit():
                return int(first)
        await asyncio.sleep(0.1)
    raise BrowserError("chromium did not open its devtools port")


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()
