"""An emulated electronic roulette wheel (Cammegh SlingShot-2 style line feed).

:class:`WheelModel` is pure: from a seed it produces, game by game, the lines a real
wheel writes — the state sequence 1 → 2 → 3 → 4 → 5 with each state repeated a few
times, several identical state-5 lines per result, and now and then the awkward cases
a reader must survive ([S]/[A] in ``shared/reference/roulette-wheel.md``):

* garbage: line noise, a truncated line, a non-ASCII burst;
* a ball-removed restart: the "ball removed, not sensed" flag during the spin, and the
  game starts over under the same game number;
* a misspin: the wheel reports the pocket with the misfire flag set, so the game has no
  result and the next game number follows.

Each game's true outcome is kept (:attr:`WheelModel.truth`), so a test can check that
the debouncer turns the noisy stream into exactly these results.  :class:`WheelServer`
streams the model's lines to TCP clients on loopback (port 0 = any free port).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass, field

from protocols.wheel.codec import GameStateLine, WarningFlag, WheelState, encode_line
from protocols.wheel.debounce import WheelResult


@dataclass
class WheelModel:
    seed: int = 0
    first_game: int = 1
    garbage_rate: float = 0.04  # chance of a garbage line before each real line
    restart_rate: float = 0.06  # chance a game has a ball-removed restart
    misspin_rate: float = 0.05  # chance a game ends in a misspin (no result)
    result_repeats: tuple[int, int] = (3, 6)  # identical state-5 lines per result
    truth: list[WheelResult] = field(default_factory=list)
    misspins: list[int] = field(default_factory=list)  # game numbers with no result
    restarts: list[int] = field(default_factory=list)  # game numbers restarted

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._game = self.first_game
        self._last = self._rng.randrange(37)
        self._direction = 0

    def _line(self, state: WheelState, number: int, flags: WarningFlag = WarningFlag.NONE) -> bytes:
        speed = self._rng.randint(150, 280)  # rotor speed as the wheel reports it
        return encode_line(GameStateLine(state, self._game, number, flags, speed, self._direction))

    def _garbage(self) -> bytes:
        kind = self._rng.randrange(3)
        if kind == 0:  # line noise
            noise = bytes(self._rng.randrange(256) for _ in range(self._rng.randint(1, 12)))
            return noise + b"\r\n"
        if kind == 1:  # a line cut short
            cut = self._line(WheelState.PLACE_BETS, self._last)[: self._rng.randint(3, 12)]
            return cut + b"\r\n"
        return b"*X;5;;;;\r\n"

    def _emit(self, out: list[bytes], line: bytes) -> None:
        if self._rng.random() < self.garbage_rate:
            out.append(self._garbage())
        out.append(line)

    def _repeat(
        self,
        out: list[bytes],
        state: WheelState,
        number: int,
        lo: int,
        hi: int,
        flags: WarningFlag = WarningFlag.NONE,
    ) -> None:
        for _ in range(self._rng.randint(lo, hi)):
            self._emit(out, self._line(state, number, flags))

    def next_game(self) -> list[bytes]:
        """The lines of one game; updates :attr:`truth` (or :attr:`misspins`)."""
        out: list[bytes] = []
        self._repeat(out, WheelState.START_OF_GAME, self._last, 1, 2)
        self._repeat(out, WheelState.PLACE_BETS, self._last, 2, 4)
        self._repeat(out, WheelState.BALL_LAUNCHED, self._last, 1, 2)
        if self._rng.random() < self.restart_rate:
            self._repeat(out, WheelState.BALL_LAUNCHED, self._last, 1, 2, WarningFlag.BALL_REMOVED)
            self.restarts.append(self._game)
            self._repeat(out, WheelState.START_OF_GAME, self._last, 1, 1)
            self._repeat(out, WheelState.BALL_LAUNCHED, self._last, 1, 2)
        self._repeat(out, WheelState.NO_MORE_BETS, self._last, 1, 2)
        number = self._rng.randrange(37)
        lo, hi = self.result_repeats
        if self._rng.random() < self.misspin_rate:
            self._repeat(out, WheelState.WINNING_NUMBER, number, lo, hi, WarningFlag.MISFIRE)
            self.misspins.append(self._game)
        else:
            self._repeat(out, WheelState.WINNING_NUMBER, number, lo, hi)
            self.truth.append(WheelResult(self._game, number))
            self._last = number
        self._game += 1
        self._direction ^= 1  # the dealer alternates the rotor's direction
        return out


class WheelServer:
    """Streams a :class:`WheelModel` to every connected TCP client on loopback."""

    def __init__(
        self,
        model: WheelModel,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        line_interval: float = 0.05,
        games: int | None = None,
        game_pause: float = 0.0,
    ) -> None:
        self.model = model
        self._host, self._port = host, port
        self._interval = line_interval
        self._pause = game_pause
        self._games = games
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._client = asyncio.Event()
        self.done = asyncio.Event()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._on_client, self._host, self._port)
        self._task = asyncio.create_task(self._run())

    async def _on_client(self, _reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        self._client.set()

    async def _run(self) -> None:
        await self._client.wait()  # a wheel with nobody listening loses nothing of interest
        played = 0
        while self._games is None or played < self._games:
            for line in self.model.next_game():
                await self._broadcast(line)
                if self._interval:
                    await asyncio.sleep(self._interval)
            played += 1
            if self._pause:
                await asyncio.sleep(self._pause)
        self.done.set()
        for writer in list(self._writers):
            writer.close()

    async def _broadcast(self, line: bytes) -> None:
        for writer in list(self._writers):
            try:
                writer.write(line)
                await writer.drain()
            except (ConnectionError, OSError):
                self._writers.discard(writer)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for writer in list(self._writers):
            writer.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
