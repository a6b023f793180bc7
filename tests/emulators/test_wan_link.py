"""The emulated wide-area link: bytes pass both ways; a cut resets what is open and refuses
new connections; a restore listens on the same port again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from emulators.wan_link import WanLink


@pytest.fixture
async def echo_port() -> AsyncIterator[int]:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(1024):
            writer.write(data)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


async def _round_trip(port: int, payload: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(payload)
    await writer.drain()
    got = await asyncio.wait_for(reader.readexactly(len(payload)), 5)
    writer.close()
    return got


async def _closed(reader: asyncio.StreamReader) -> bool:
    """True once the other end is gone: end of stream or a reset (an aborted socket)."""
    try:
        return await asyncio.wait_for(reader.read(1024), 5) == b""
    except ConnectionResetError:
        return True


async def test_bytes_cross_the_link_both_ways(echo_port: int) -> None:
    link = WanLink(echo_port)
    await link.start()
    try:
        assert await _round_trip(link.port, b"select 1") == b"select 1"
    finally:
        await link.close()


async def test_a_cut_resets_open_connections_and_refuses_new_ones(echo_port: int) -> None:
    link = WanLink(echo_port)
    await link.start()
    reader, writer = await asyncio.open_connection("127.0.0.1", link.port)
    writer.write(b"ping")
    assert await asyncio.wait_for(reader.readexactly(4), 5) == b"ping"
    await link.cut()
    assert await _closed(reader)  # the link's side is gone
    writer.close()
    with pytest.raises(ConnectionRefusedError):
        await _round_trip(link.port, b"x")


async def test_a_restore_listens_on_the_same_port(echo_port: int) -> None:
    link = WanLink(echo_port)
    await link.start()
    port = link.port
    await link.cut()
    await link.restore()
    try:
        assert link.port == port  # the client's URL does not change
        assert await _round_trip(port, b"back") == b"back"
    finally:
        await link.close()


async def test_an_unreachable_target_closes_the_client(unused_tcp_port: int) -> None:
    link = WanLink(unused_tcp_port)  # nothing listens there: a closed loopback port
    await link.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", link.port)
        assert await _closed(reader)
        writer.close()
    finally:
        await link.close()
