"""A loopback TCP proxy in a thread of its own that can be cut and restored: a venue's
wide-area link to the central database, for benchmarks run from synchronous code.

Cutting closes the listening socket and aborts every connection through it (as a failed
link does: the peer sees a reset, a new connection is refused); restoring listens on the
same port again, so the gateway's database URL does not change.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading


class LinkProxy:
    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.host = host
        self.target_port = target_port
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.StreamWriter] = set()
        self._thread.start()
        self._call(self._listen())

    def _call(self, coro: object) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=10)  # type: ignore[arg-type]

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._client, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_r, up_w = await asyncio.open_connection(self.host, self.target_port)
        except OSError:
            writer.close()
            return
        self._pipes.update({writer, up_w})
        await asyncio.gather(self._pump(reader, up_w), self._pump(up_r, writer))

    async def _pump(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
        dst.close()
        self._pipes.discard(dst)

    async def _cut(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for w in list(self._pipes):
            w.transport.abort()
        self._pipes.clear()

    def cut(self) -> None:
        self._call(self._cut())

    def restore(self) -> None:
        self._call(self._listen())

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._call(self._cut())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
