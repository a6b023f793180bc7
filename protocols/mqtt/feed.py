"""The live tournament feed over MQTT, for leaderboards and signage (``docs/mqtt.md``).

Topic tree, all under ``reelgate/v1/<site>/feed/`` (R = retained):

=====================================  ===  ==========================================
``current``                             R   ``{"heat": KEY}``: the heat signs should show
                                            (optional ``name``, ``stage``)
``heat/<KEY>/state``                    R   state, ``seconds_left`` countdown, ``at``;
                                            optional ``name``, ``stage``, ``machines``
``heat/<KEY>/seat/<MACHINE>``           R   provisional credits while playing; ``final``
                                            once scored; optional ``player``
``heat/<KEY>/standings``                R   ranked rows after the heat (rule 19 ties
                                            are flagged, not broken: that is a card draw);
                                            optional ``player`` per row
``super9/<SESSION>/draw``               R   the Super 9 live draw (published by Super 9)
=====================================  ===  ==========================================

Every payload is a JSON object with ``"v": 1`` added.  Retained topics are the ones a
sign switched on late needs; everything published here is retained in practice, and
the feed republishes its last retained values after a reconnect (the embedded broker
forgets retained messages when it restarts).

:class:`MqttFeed` never blocks the heat: ``publish`` only queues.  Retained values are
coalesced per topic (a sign only needs the newest), other messages wait in a bounded
queue whose oldest entries are dropped and counted if the broker is away for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from protocols.mqtt.client import MqttSession, MqttSettings, MqttUnavailable
from protocols.mqtt.topics import VERSION, feed_topic

log = logging.getLogger(__name__)

# Must match gateway.heats progress values; kept as text so protocols/ stays below gateway/.
_ENDED_STATES = frozenset({"collecting", "closed"})
_VOID_STATES = frozenset({"aborted", "restarted"})


@dataclass(slots=True)
class FeedStats:
    queued: int = 0
    published: int = 0
    dropped: int = 0
    republished: int = 0


class MqttFeed:
    """:class:`gateway.feed.FeedPublisher` over MQTT, relative to one site's feed tree."""

    def __init__(self, session: MqttSession, site: str, *, backlog: int = 1000) -> None:
        self.session = session
        self.site = site
        self.stats = FeedStats()
        self._retained: dict[str, bytes] = {}  # last value per topic, for resync
        self._due: OrderedDict[str, bytes] = OrderedDict()  # retained, not yet sent
        self._plain: deque[tuple[str, bytes]] = deque()
        self._backlog = backlog
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._own_session = False
        self._pump: asyncio.Task[None] | None = None
        session.on_connect(self._resync)

    @classmethod
    async def connect(cls, broker_url: str, site: str, *, wait: bool = True) -> MqttFeed:
        """A feed with its own session; ``wait`` for the broker (MqttUnavailable if none)."""
        session = MqttSession(MqttSettings.from_url(broker_url))
        feed = cls(session, site)
        feed._own_session = True
        await session.start(wait=wait)
        feed.start()
        return feed

    def start(self) -> None:
        if self._pump is None:
            self._pump = asyncio.create_task(self._run(), name=f"feed-{self.site}")

    async def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
            self._pump = None
        if self._own_session:
            await self.session.close()

    # -- FeedPublisher -----------------------------------------------------------------
    async def publish(self, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        self.publish_nowait(topic, payload, retain=retain)

    def publish_nowait(self, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        """Queue one message.  A bad topic or a payload that is not JSON raises at once
        (a programming error); a missing broker never does."""
        full = feed_topic(self.site, topic)
        body = json.dumps({"v": VERSION, **payload}, separators=(",", ":"), default=_json_default)
        data = body.encode()
        self.stats.queued += 1
        if retain:
            self._retained[full] = data
            self._due[full] = data
            self._due.move_to_end(full)
        else:
            if len(self._plain) >= self._backlog:
                self._plain.popleft()
                self.stats.dropped += 1
            self._plain.append((full, data))
        self._idle.clear()
        self._wake.set()
        if self._pump is None:
            self.start()

    async def flush(self, within: float = 5.0) -> None:
        """Wait until everything queued has been sent (tests, shutdown)."""
        await asyncio.wait_for(self._idle.wait(), within)

    # -- pump --------------------------------------------------------------------------
    async def _resync(self) -> None:
        for topic, data in self._retained.items():
            if topic not in self._due:
                self._due[topic] = data
                self.stats.republished += 1
        self._wake.set()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                while self._due or self._plain:
                    if self._plain:
                        topic, data = self._plain[0]
                        await self.session.publish(topic, data)
                        self._plain.popleft()
                    else:
                        topic, data = next(iter(self._due.items()))
                        await self.session.publish(topic, data, retain=True)
                        if self._due.get(topic) is data:
                            del self._due[topic]
                    self.stats.published += 1
                self._idle.set()
            except MqttUnavailable:
                await self.session.connected.wait()
                self._wake.set()


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"feed payload value {value!r} is not JSON")


class NowaitPublisher(Protocol):
    """What :class:`LiveHeatFeed` needs: a publish that never waits (:class:`MqttFeed`,
    or the signage page's ``gateway.web.FanoutFeed`` wrapping one or nothing)."""

    def publish_nowait(
        self, topic: str, payload: dict[str, Any], *, retain: bool = False
    ) -> None: ...


class LiveHeatFeed:
    """Turns a heat's progress notes (``gateway.heats.hooks.ProgressNote``, passed as
    ``progress=`` to the heat runner) into the signage topics of one heat.

    Duck-typed on the note (``kind``, ``state``, ``machine_id``, ``value``, ``detail``,
    ``seconds_left``) so this protocol package does not import the gateway.
    """

    def __init__(
        self,
        feed: NowaitPublisher,
        heat_key: str,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        tick: float | None = 1.0,
        name: str | None = None,
        stage: str | None = None,
        players: Mapping[str, str] | None = None,
        machines: Sequence[str] = (),
    ) -> None:
        self.feed = feed
        self.key = heat_key
        self.clock = clock
        self.tick = tick  # countdown interval while running; None: state changes only
        self._ticker: asyncio.Task[None] | None = None
        self.credits: dict[str, int] = {}
        self.final: set[str] = set()
        self.malfunctioned: dict[str, str] = {}
        # What a sign shows beside the numbers (all optional, docs/signage.md).
        self.name = name
        self.stage = stage
        self.players: dict[str, str] = dict(players or {})
        self.machines: list[str] = list(machines) or list(self.players)
        self._state: tuple[str, float | None] | None = None  # last state, for describe()
        self._publish_current()

    def _publish_current(self) -> None:
        self.feed.publish_nowait("current", {"heat": self.key, **self._labels()}, retain=True)

    def _labels(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.name:
            out["name"] = self.name
        if self.stage:
            out["stage"] = self.stage
        return out

    def describe(
        self,
        *,
        name: str | None = None,
        stage: str | None = None,
        players: Mapping[str, str] | None = None,
    ) -> None:
        """Add the heat's name, stage and seated players (looked up after the heat began)
        and republish what a sign shows with them."""
        self.name = name or self.name
        self.stage = stage or self.stage
        if players:
            self.players.update(players)
            self.machines += [m for m in players if m not in self.machines]
        self._publish_current()
        if self._state is not None:
            self._publish_state(*self._state)
        for machine_id in set(self.credits) | set(self.malfunctioned):
            self._seat(machine_id)

    def __call__(self, note: Any) -> None:
        kind = getattr(note.kind, "value", note.kind)
        if kind == "state":
            left = None if note.seconds_left is None else float(note.seconds_left)
            self._publish_state(note.state, left)
            self._restart_ticker(note.state, left)
            if note.state in _ENDED_STATES or note.state in _VOID_STATES:
                self.publish_standings(void=note.state in _VOID_STATES)
        elif kind in ("credits", "score") and note.machine_id and note.value is not None:
            self.credits[note.machine_id] = int(note.value)
            if kind == "score":
                self.final.add(note.machine_id)
            self._seat(note.machine_id)
        elif kind == "malfunction" and note.machine_id:
            self.malfunctioned[note.machine_id] = note.detail  # rule 20
            self._seat(note.machine_id)

    def _publish_state(self, state: str, seconds_left: float | None) -> None:
        self._state = (state, seconds_left)
        payload: dict[str, Any] = {"heat": self.key, "state": state, "at": self.clock()}
        payload["seconds_left"] = None if seconds_left is None else round(seconds_left, 1)
        payload.update(self._labels())
        if self.machines:
            payload["machines"] = list(self.machines)
        self.feed.publish_nowait(f"heat/{self.key}/state", payload, retain=True)

    def _restart_ticker(self, state: str, seconds_left: float | None) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if state == "running" and seconds_left and self.tick:
            ends = asyncio.get_running_loop().time() + float(seconds_left)
            self._ticker = asyncio.create_task(self._count_down(ends, self.tick))

    async def _count_down(self, ends: float, tick: float) -> None:
        loop = asyncio.get_running_loop()
        # Bounded: at most seconds_left / tick iterations, then the runner's next state.
        while ends - loop.time() > tick:
            await asyncio.sleep(tick)
            self.countdown("running", max(0.0, ends - loop.time()))

    def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()

    def countdown(self, state: str, seconds_left: float) -> None:
        """Publish a countdown tick between state changes (the runner notes only changes)."""
        self._publish_state(state, seconds_left)

    def _seat(self, machine_id: str) -> None:
        payload: dict[str, Any] = {
            "heat": self.key,
            "machine": machine_id,
            "credits": self.credits.get(machine_id),
            "final": machine_id in self.final,
            "malfunction": self.malfunctioned.get(machine_id),
            "at": self.clock(),
        }
        if machine_id in self.players:
            payload["player"] = self.players[machine_id]
        self.feed.publish_nowait(f"heat/{self.key}/seat/{machine_id}", payload, retain=True)

    def standings(self) -> list[dict[str, Any]]:
        """Rank by credits, highest first (rule 13/14).  Equal credits share a rank and
        are flagged ``tie``: rule 19 breaks ties by a card draw, not by the system."""
        rows = sorted(
            ((m, c) for m, c in self.credits.items() if m not in self.malfunctioned),
            key=lambda mc: (-mc[1], mc[0]),
        )
        counts: dict[int, int] = {}
        for _, c in rows:
            counts[c] = counts.get(c, 0) + 1
        out: list[dict[str, Any]] = []
        rank = 0
        previous: int | None = None
        for position, (machine_id, credits) in enumerate(rows, start=1):
            if credits != previous:
                rank, previous = position, credits
            row: dict[str, Any] = {
                "rank": rank,
                "machine": machine_id,
                "credits": credits,
                "tie": counts[credits] > 1,
            }
            if machine_id in self.players:
                row["player"] = self.players[machine_id]
            out.append(row)
        return out

    def publish_standings(self, *, void: bool = False) -> None:
        self.feed.publish_nowait(
            f"heat/{self.key}/standings",
            {
                "heat": self.key,
                "void": void,
                "rows": [] if void else self.standings(),
                "at": self.clock(),
            },
            retain=True,
        )
