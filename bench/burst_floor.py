"""The floor under a start burst on this host: N loopback TCP connections, no protocol.

    python bench/burst_floor.py                      # 1,000 connections, 4 receivers, 5 bursts
    python bench/burst_floor.py --connections 250 --receivers 1
    python bench/burst_floor.py --senders 4          # four gateways firing at one instant

What a synchronised start of N machines costs at the least, whatever the gateway and the
emulators do: ``--senders`` processes (one gateway, or several firing at one instant, as
in ``bench/enterprise.py``) write one pre-built 2-byte frame (an LP 02) to each of their
share of N connections in a tight loop of plain ``socket.send`` calls (no asyncio, no
framing, no bookkeeping; several senders spin to a shared monotonic instant), and
``--receivers`` processes (as the benchmarks' emulator processes are) each wait on
their share with ``select.epoll`` and stamp each frame's arrival with
``time.monotonic()`` (comparable across processes) as they read it (no decoding, no
machine model, no reply).  Printed per burst: the slowest sender's loop, the receivers'
spread (first arrival to last, over every connection), and the widest spread within one
receiver.

The start-skew goals (``bench/heat.py --sizes 1000``, ``bench/enterprise.py``) are a
spread of the machines' own stamps, so they can be no smaller than this one; on a floor
each machine has its own CPU and the receivers' part is not serial.  Loopback only;
every loop is bounded.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import select
import socket
import statistics
import sys
import time
from collections.abc import Callable
from multiprocessing.connection import Connection

FRAME = bytes([0x01, 0x02])  # address 1, LP 02 (start/unlock play), as a type S poll


def _receiver(sockets: list[socket.socket], bursts: int, pipe: Connection) -> None:
    """Stamp the arrival of each burst's frame on every one of ``sockets``."""
    poller = select.epoll()
    by_fd = {s.fileno(): s for s in sockets}
    for fd in by_fd:
        poller.register(fd, select.EPOLLIN)
    pipe.send("ready")
    for _ in range(bursts):
        stamps: list[float] = []
        deadline = time.monotonic() + 30.0
        while len(stamps) < len(sockets) and time.monotonic() < deadline:  # bounded
            for fd, _ in poller.poll(1.0):
                by_fd[fd].recv(64)
                stamps.append(time.monotonic())
        pipe.send(stamps)


def _sender(sockets: list[socket.socket], bursts: int, pipe: Connection) -> None:
    """Fire at each instant the pipe names (monotonic s): spin to it, then send."""
    for _ in range(bursts):
        at = pipe.recv()
        limit = 10_000_000  # bounded spin
        while time.monotonic() < at and limit:
            limit -= 1
        t0 = time.perf_counter()
        for s in sockets:
            s.send(FRAME)
        pipe.send((time.perf_counter() - t0) * 1000)


def _pairs(count: int) -> tuple[list[socket.socket], list[socket.socket]]:
    """``count`` connected loopback TCP pairs (sender side, receiver side)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1024)
        senders, receivers = [], []
        for _ in range(count):
            s = socket.create_connection(server.getsockname())
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            r, _ = server.accept()
            senders.append(s)
            receivers.append(r)
    return senders, receivers


def _spawn(
    ctx: mp.context.ForkContext, target: Callable[..., None], socks: list[socket.socket],
    processes: int, bursts: int, procs: list[mp.process.BaseProcess],
) -> list[Connection]:  # fmt: skip
    """``processes`` processes of ``target``, each with its share of ``socks``."""
    share = -(-len(socks) // processes)
    pipes = []
    for i in range(processes):
        mine = socks[i * share : (i + 1) * share]
        if not mine:
            break
        ours, theirs = ctx.Pipe()
        proc = ctx.Process(target=target, args=(mine, bursts, theirs), daemon=True)
        proc.start()
        pipes.append(ours)
        procs.append(proc)
    return pipes


def _burst(firing: list[Connection], pipes: list[Connection]) -> tuple[float, float, float]:
    """One burst: (slowest sender's loop, spread over every connection, widest within
    one receiver), ms."""
    at = time.monotonic() + 0.3  # the receivers are waiting in epoll by then
    for pipe in firing:
        pipe.send(at)
    loop_ms = max(pipe.recv() for pipe in firing)
    stamps = [pipe.recv() for pipe in pipes]
    every = [t for mine in stamps for t in mine]
    within = max((max(m) - min(m)) * 1000 for m in stamps if m)
    return loop_ms, (max(every) - min(every)) * 1000, within


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--receivers", type=int, default=4, help="receiver processes")
    parser.add_argument("--senders", type=int, default=1, help="sender processes")
    parser.add_argument("--bursts", type=int, default=5)
    args = parser.parse_args(argv)
    if min(args.connections, args.receivers, args.senders, args.bursts) < 1:
        print("burst_floor: --connections, --receivers, --senders and --bursts must be at "
              "least 1", file=sys.stderr)  # fmt: skip
        return 2
    senders, receivers = _pairs(args.connections)
    ctx = mp.get_context("fork")
    procs: list[mp.process.BaseProcess] = []
    pipes = _spawn(ctx, _receiver, receivers, args.receivers, args.bursts, procs)
    for pipe in pipes:
        if pipe.recv() != "ready":
            raise RuntimeError("a receiver did not start")
    firing = _spawn(ctx, _sender, senders, args.senders, args.bursts, procs)
    rows = [_burst(firing, pipes) for _ in range(args.bursts)]
    for proc in procs:
        proc.join(5)
    for s in senders + receivers:
        s.close()
    print(f"start burst floor: {args.connections} loopback TCP connections, {len(firing)} "
          f"sender and {len(pipes)} receiver processes, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"{'burst':>5} {'sender loop ms':>15} {'spread ms':>10} {'one receiver ms':>16}")
    for i, (loop_ms, spread, within) in enumerate(rows, 1):
        print(f"{i:>5} {loop_ms:>15.2f} {spread:>10.2f} {within:>16.2f}")
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    print(f"{'med':>5} {med[0]:>15.2f} {med[1]:>10.2f} {med[2]:>16.2f}")
    cost = med[0] * 1000 / -(-args.connections // len(firing))
    print(f"sender: {cost:.1f} us a connection (the kernel's loopback send runs the "
          "receiver's TCP input too)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
