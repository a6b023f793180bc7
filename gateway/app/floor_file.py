"""A floor file written for emulated machines (``reelgate emulate sas --floor-out FILE``).

The emulator prints its endpoints as JSON lines; a technician trying the README's
session needs them as a floor file.  The text is parsed back with the gateway's own
parser before it is written, so what lands on disk is a floor ``--floor`` accepts."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from gateway.errors import OperatorError
from gateway.floor.model import parse_floor


def floor_text(bank: str, machines: Sequence[Mapping[str, object]]) -> str:
    """One ``[[bank]]`` holding ``machines`` (the emulator's ``describe()`` records) in order."""
    rows = []
    for m in machines:
        if "serial_device" in m:
            endpoint = f"sas+serial://{m['serial_device']}?address={m['address']}"
        else:
            endpoint = str(m["endpoint"])
        rows.append(
            f"  {{ id = {json.dumps(str(m['machine']))}, endpoint = {json.dumps(endpoint)} }}"
        )
    body = ",\n".join(rows)
    return (
        "# Written by `reelgate emulate sas --floor-out`: emulated machines on loopback.\n"
        f"[[bank]]\nname = {json.dumps(bank)}\nmachines = [\n{body},\n]\n"
    )


def write_floor_file(path: str | Path, bank: str, machines: Sequence[Mapping[str, object]]) -> None:
    """Write the floor file atomically (a reader never sees half of it)."""
    text = floor_text(bank, machines)
    parse_floor(text, source="--floor-out")  # our own output must be a floor we accept
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent or ".", prefix=".floor-", suffix=".toml")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        raise OperatorError(f"--floor-out {path}: cannot write ({exc.strerror or exc})") from None
