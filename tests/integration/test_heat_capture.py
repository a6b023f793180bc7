"""``reelgate heat run --capture FILE``: a test heat recorded byte for byte (issue 28).

One capture file per port (``FILE.<host>_<port>``), each in the documented format, and
the heat itself unchanged by the tap: it closes with a score for every seat; each file
replays with every poll answered and nothing odd."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from protocols.sas.capture import parse_capture
from protocols.sas.client import TCP_SETTINGS
from protocols.sas.replay import replay

ROOT = Path(__file__).resolve().parents[2]


def _reelgate(*args: str) -> list[str]:
    return [sys.executable, "-m", "gateway", *args]


def test_heat_run_capture_records_each_port(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REELGATE_")}
    env["PYTHONPATH"] = str(ROOT)
    floor = tmp_path / "floor.toml"
    emulator = subprocess.Popen(
        _reelgate("emulate", "sas", "--machines", "2", "--floor-out", str(floor),
                  "--duration", "120"),
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert emulator.stdout is not None
        ports = []
        for line in emulator.stdout:  # bounded by the emulator's --duration
            row = json.loads(line)
            if row.get("ready"):
                break
            ports.append(row["port"])
        db = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
        common = ["--database", db, "--spool", str(tmp_path / "spool")]
        done = subprocess.run(_reelgate("db", "upgrade", "--database", db), cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        base = tmp_path / "heat.jsonl"
        done = subprocess.run(
            _reelgate("heat", "run", "--floor", str(floor), *common, "--bank", "A",
                      "--seconds", "1", "--credits", "100", "--json",
                      "--capture", str(base)),
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    finally:
        emulator.terminate()
        emulator.wait(timeout=20)
    files = sorted(tmp_path.glob("heat.jsonl.*"))
    assert [f.name for f in files] == sorted(f"heat.jsonl.127.0.0.1_{p}" for p in ports)
    for f in files:
        header, records = parse_capture(f.read_text().splitlines())
        assert header.endpoint.startswith("sas+tcp://127.0.0.1:")
        report = replay(records, TCP_SETTINGS)
        assert report.polls > 5
        assert report.failures == 0
        assert report.trailing_bytes == 0
        assert report.odd == 0, [e.odd for e in report.entries if e.odd]
        assert report.replies >= report.polls - 1  # the last may be cut by the close


def test_bank_check_shows_a_machines_quirks_without_blocking(tmp_path: Path) -> None:
    """``bank check`` (issue 28): a machine whose LP 1F base percent comes in BCD is not
    blocked; its quirk is listed with it (table and JSON)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REELGATE_")}
    env["PYTHONPATH"] = str(ROOT)
    floor = tmp_path / "floor.toml"
    emulator = subprocess.Popen(
        _reelgate("emulate", "sas", "--machines", "1", "--floor-out", str(floor),
                  "--quirks", "base-percent-bcd", "--duration", "120"),
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert emulator.stdout is not None
        for line in emulator.stdout:  # bounded by the emulator's --duration
            if json.loads(line).get("ready"):
                break
        db = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
        done = subprocess.run(_reelgate("db", "upgrade", "--database", db), cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        check = ["bank", "check", "A", "--floor", str(floor), "--database", db,
                 "--spool", str(tmp_path / "spool")]  # fmt: skip
        done = subprocess.run(_reelgate(*check, "--json"), cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        (row,) = json.loads(done.stdout)
        assert row["ok"] is True, row["blockers"]
        quirk = "LP 1F: base percent is not ASCII digits: 00 00 90 00 (kept as received)"
        assert row["quirks"] == [quirk]
        done = subprocess.run(_reelgate(*check), cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert f"EMU-001 quirk: {quirk}" in done.stdout
    finally:
        emulator.terminate()
        emulator.wait(timeout=20)
