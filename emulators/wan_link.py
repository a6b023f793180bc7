"""An emulated wide-area link: a loopback TCP proxy that can be cut and restored.

Cutting closes the listening socket and aborts every connection through it, as a failed
link or host does (the peer sees a reset, a new connection is refused); restoring listens
on the same port again, so the client's URL (a venue's database URL) does not change.
It runs in the caller's event loop; ``bench/link_proxy.py`` runs one in a thread of its
own for synchronous benchmark code.
"""

from __future__ import annotations

import asyncio
import contextlib


class WanLink:
    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.host = host
        self.target_port = target_port
        self.port = 0  # chosen at the first start, kept across cuts
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._client, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for w in list(self._pipes):
            w.transport.abort()
        self._pipes.clear()

    async def restore(self) -> None:
        await self.start()

    async def close(self) -> None:
        await self.cut()

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
