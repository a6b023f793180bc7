"""Signage benchmark: publish → page latency with many signs, and a late sign's replay.

Goal: a score reaches every connected sign within 100 ms (95th percentile) with 200
signs open, and a sign switched on late gets 2,000 retained topics within 250 ms.

For each client count the server runs on 127.0.0.1:0 and that many SSE clients connect
over real sockets (aiohttp, in the same process and event loop as the server, so their
parsing is on the clock too: a pessimistic figure).  Messages are published through the
:class:`FanoutFeed` at a steady pace; each client timestamps every frame it reads.
Reported: the ``publish`` call's own cost, and the publish → received latency over every
(message, client) pair.  The replay is timed from the request to the last replayed frame.

Run: ``python bench/signage.py`` (``--clients 1,50,200``, ``--messages 200``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from dataclasses import dataclass, field

import aiohttp

from gateway.web.fanout import FanoutFeed
from gateway.web.server import start_signage

GOAL_LATENCY_MS = 100.0
GOAL_REPLAY_MS = 250.0


@dataclass
class Run:
    clients: int
    publish_us: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    lost: int = 0


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _client(
    http: aiohttp.ClientSession, url: str, want: int, ready: asyncio.Event, out: dict[int, float]
) -> None:
    async with http.get(url) as response:
        ready.set()
        while len(out) < want:  # bounded: the caller's timeout ends a stuck client
            line = await response.content.readline()
            if not line:
                return
            if line.startswith(b"data: {\"seq\""):
                now = time.perf_counter()
                body = json.loads(line[6:])
                if body["topic"] == "bench/tick":
                    out[body["payload"]["n"]] = now


async def latency(clients: int, messages: int, pace_s: float) -> Run:
    feed = FanoutFeed(max_clients=clients + 1, client_backlog=messages + 10)
    server = await start_signage(feed, "127.0.0.1", 0)
    run = Run(clients)
    connector = aiohttp.TCPConnector(limit=clients + 1)
    async with aiohttp.ClientSession(connector=connector) as http:
        received: list[dict[int, float]] = [{} for _ in range(clients)]
        readies = [asyncio.Event() for _ in range(clients)]
        tasks = [
            asyncio.create_task(_client(http, f"{server.url}events", messages, readies[i], rx))
            for i, rx in enumerate(received)
        ]
        async with asyncio.timeout(30):
            for ready in readies:
                await ready.wait()
            while feed.stats.clients < clients:  # noqa: ASYNC110  (bounded by the timeout)
                await asyncio.sleep(0.01)
        sent: dict[int, float] = {}
        for n in range(messages):
            t0 = time.perf_counter()
            await feed.publish("bench/tick", {"n": n, "credits": 1000 + n}, retain=True)
            sent[n] = t0
            run.publish_us.append((time.perf_counter() - t0) * 1e6)
            await asyncio.sleep(pace_s)
        try:
            async with asyncio.timeout(30):
                await asyncio.gather(*tasks)
        except TimeoutError:
            pass
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for rx in received:
            run.lost += messages - len(rx)
            run.latency_ms.extend((rx[n] - sent[n]) * 1000 for n in rx)
    await server.close()
    return run


async def replay(topics: int, repeats: int) -> list[float]:
    feed = FanoutFeed()
    for i in range(topics):
        await feed.publish(
            f"heat/{i // 50}/seat/M{i:05d}",
            {"heat": str(i // 50), "machine": f"M{i:05d}", "credits": i * 7, "final": False},
            retain=True,
        )
    server = await start_signage(feed, "127.0.0.1", 0)
    times: list[float] = []
    async with aiohttp.ClientSession() as http:
        for _ in range(repeats):
            t0 = time.perf_counter()
            got = 0
            async with http.get(f"{server.url}events") as response:
                async with asyncio.timeout(30):
                    while got < topics:  # bounded by the timeout
                        line = await response.content.readline()
                        if line.startswith(b"data: {\"seq\""):
                            got += 1
            times.append((time.perf_counter() - t0) * 1000)
    await server.close()
    return times


async def main(args: argparse.Namespace) -> int:
    counts = [int(c) for c in args.clients.split(",")]
    print(f"publish -> page, {args.messages} messages every {args.pace * 1000:.0f} ms")
    print(f"{'clients':>8} {'publish µs (med)':>17} {'latency ms (med)':>17} "
          f"{'p95':>8} {'max':>8} {'lost':>6}")  # fmt: skip
    verdict = True
    for clients in counts:
        run = await latency(clients, args.messages, args.pace)
        p95 = pct(run.latency_ms, 0.95)
        print(
            f"{clients:>8} {statistics.median(run.publish_us):>17.1f} "
            f"{statistics.median(run.latency_ms):>17.2f} {p95:>8.2f} "
            f"{max(run.latency_ms):>8.2f} {run.lost:>6}"
        )
        if clients >= 200:
            verdict = verdict and p95 <= GOAL_LATENCY_MS and run.lost == 0
    times = await replay(args.topics, args.repeats)
    print(f"\nlate sign replay of {args.topics} retained topics, {args.repeats} connects")
    print(f"{'median ms':>10} {'max ms':>8}")
    print(f"{statistics.median(times):>10.1f} {max(times):>8.1f}")
    verdict = verdict and statistics.median(times) <= GOAL_REPLAY_MS
    print(
        f"\ngoal: p95 <= {GOAL_LATENCY_MS:.0f} ms at 200 clients, nothing lost; replay median "
        f"<= {GOAL_REPLAY_MS:.0f} ms: {'MET' if verdict else 'MISSED'}"
    )
    return 0 if verdict else 1


def cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clients", default="1,50,200")
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--pace", type=float, default=0.01, help="seconds between publishes")
    parser.add_argument("--topics", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    return asyncio.run(main(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(cli())
