"""``reelgate demo`` from a fresh folder, as the README runs it: a whole qualifying heat with
nothing set up, the signage page serving it live, and the standings at the end."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.request import urlopen

from ..gateway.emulated import ROOT


def _snapshot(url: str) -> dict[str, Any]:
    with urlopen(f"{url}snapshot", timeout=5) as response:  # loopback only
        body: dict[str, dict[str, Any]] = json.loads(response.read())
    return body["retained"]


def test_demo_runs_a_heat_and_its_signage_page_shows_it(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "gateway", "demo", "--seconds", "3", "--machines", "3",
           "--linger", "20"]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "120"},
    )  # fmt: skip
    assert proc.stdout is not None
    lines: list[str] = []
    url = ""
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # bounded; readline returns "" at the end
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            found = re.search(r"http://127\.0\.0\.1:\d+/signage/", line)
            if found:
                url = found.group(0)
            if "stays up" in line:  # the standings are printed; the page lingers
                break
        text = "".join(lines)
        assert url, text
        assert "Qualifying standings" in text, text
        assert "heat closed" in text, text
        # Issue 24, problem 10: the demo speaks the floor's words, not the engineer's.
        assert "native 8C" not in text, text
        assert "run the heat clock themselves" in text, text
        assert "what happened" in text, text  # no blank column headers
        assert "What next:" in text, text
        page = _snapshot(url)
        key = page["current"]["heat"]
        assert page["current"]["stage"] == "Qualifying"
        assert page["current"]["name"] == "Reelgate demo - heat 1"
        assert page["about"] == {"training": True}  # the demo's database is a training one
        assert page[f"heat/{key}/state"]["state"] == "closed"
        rows = page[f"heat/{key}/standings"]["rows"]
        assert len(rows) == 3
        assert all(r["player"] for r in rows)
        credits = [r["credits"] for r in rows]
        assert credits == sorted(credits, reverse=True)  # T13: highest first
        for r in rows:  # the page's final scores are the stored ones the demo printed
            assert re.search(rf"{re.escape(r['player'])}\s*│\s*{r['credits']}\b", text), text
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C while the page lingers
        proc.wait(timeout=20)
    assert list(tmp_path.iterdir()) == []  # nothing left behind in the folder it ran from
    work = re.search(r"working folder (\S+)", "".join(lines))
    assert work is not None
    assert not Path(work.group(1)).exists()  # its own folder removed
