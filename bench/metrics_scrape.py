"""What a Prometheus scrape of ``/metrics`` costs the gateway's event loop, by floor size.

    python bench/metrics_scrape.py                   # 100, 500 and 1000 machines
    python bench/metrics_scrape.py --machines 2000 --rounds 50

The collector (``gateway.app.monitoring.metrics``) reads every machine's link counters
at scrape time, so the poll path pays nothing and the scrape pays it all, on the event
loop that also polls the machines.  This renders the gateway's registry for N machines
on banks of 10 (SAS drivers with counters, a supervisor per bank) and prints the median
and p99 time the event loop spends reading the floor (the formatting runs in a worker
thread) with the whole scrape's median and the body size; goal: loop p99 under 50 ms for
1000 machines (a fraction of one 200 ms poll cycle, once per 15 s scrape).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prometheus_client import CollectorRegistry, generate_latest  # noqa: E402

from gateway.app.monitoring.metrics import DatabaseSnapshot, GatewayCollector  # noqa: E402
from gateway.heats.spool import JournalWriter  # noqa: E402
from gateway.heats.supervisor import BankSupervisor  # noqa: E402
from gateway.machines.links import MachineLink  # noqa: E402
from gateway.machines.sas import SasDriver  # noqa: E402
from gateway.web.api.ops import Collected  # noqa: E402
from storage.journal import Journal  # noqa: E402


class Floor:
    """N machines on banks of 10, as the collector reads a running gateway."""

    def __init__(self, machines: int, spool: Path) -> None:
        self._links: dict[str, dict[str, MachineLink]] = {}
        for i in range(machines):
            bank = f"B{i // 10:03d}"
            machine = f"{bank}-{i % 10 + 1:02d}"
            driver = SasDriver.from_uri(machine, f"sas+tcp://127.0.0.1:9?address={i % 127 + 1}")
            self._links.setdefault(bank, {})[machine] = MachineLink(machine, driver)
        self._supervisors = {bank: BankSupervisor(links) for bank, links in self._links.items()}
        self._writer = JournalWriter(Journal(None), spool)  # type: ignore[arg-type]

    @property
    def links(self) -> Mapping[str, Mapping[str, MachineLink]]:
        return self._links

    @property
    def supervisors(self) -> Mapping[str, BankSupervisor]:
        return self._supervisors

    @property
    def writer(self) -> JournalWriter:
        return self._writer

    @property
    def banks(self) -> Iterable[str]:
        return self._links

    @property
    def held(self) -> Iterable[str]:
        return self._links


def measure(machines: int, rounds: int, spool: Path) -> tuple[float, float, float, int]:
    registry = CollectorRegistry()
    states = {bank: "running" for bank in Floor(0, spool).banks}
    snapshot = DatabaseSnapshot(states=states, ok=True)
    registry.register(GatewayCollector(Floor(machines, spool), snapshot))
    loop_ms, total_ms = [], []
    size = 0
    for _ in range(rounds):
        t0 = time.perf_counter()
        families = list(registry.collect())  # on the event loop, as /metrics does
        t1 = time.perf_counter()
        size = len(generate_latest(Collected(families)))  # in a worker thread there
        t2 = time.perf_counter()
        loop_ms.append((t1 - t0) * 1000)
        total_ms.append((t2 - t0) * 1000)
    return _p(loop_ms, 0.5), _p(loop_ms, 0.99), _p(total_ms, 0.5), size


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return statistics.median(ordered) if q == 0.5 else ordered[int((len(ordered) - 1) * q)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, action="append")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    sizes = args.machines or [100, 500, 1000]
    with tempfile.TemporaryDirectory() as tmp:
        spool = Path(tmp) / "spool"
        print(f"{'machines':>8} {'loop p50 ms':>12} {'loop p99 ms':>12} {'total p50 ms':>13} "
              f"{'body KiB':>9}")  # fmt: skip
        for n in sizes:
            p50, p99, total, size = measure(n, args.rounds, spool)
            print(f"{n:>8} {p50:>12.2f} {p99:>12.2f} {total:>13.2f} {size / 1024:>9.0f}")


if __name__ == "__main__":
    main()
