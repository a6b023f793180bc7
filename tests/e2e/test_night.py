"""Issue 24's night, end to end: one truth across desks.

From ``reelgate db init`` to the cash-up and the signed exports, each role driven as it
works: the technician on the gateway host's command line, a remote cashier's desk through
the API with a token made by ``reelgate tokens create``, the director on the host and in
the console (Chromium), on emulated machines whose players spin.  ``reelgate serve`` runs
the heats by itself at their times.

The steps, in order (each a function below, run by the one test):

1. the host: ``db init``, the accounts, a token for the remote desk;
2. the technician: two emulated banks, the floor file, ``bank check`` and ``bank enable``;
3. the director: two tournaments and their qualifying heats; ``serve`` starts;
4. the remote desk: players, entries (one paid by card), registrations;
5. the heats run; one machine of bank A stops answering mid-heat (a malfunction, T20);
6. ...

and at the end the assertions of the issue."""

from __future__ import annotations

import json
import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from .night import Host, Lines, passwords, until

ROLES = {
    "dana": "director", "pieter": "director", "naledi": "cashier", "lee": "desk",
    "tumi": "technician", "thabo": "promotion-director", "sam": "dealer", "vusi": "supervisor",
}  # fmt: skip
HEAT_SECONDS = 8
PLAYERS = [  # (ID number, name, date of birth, card)
    ("8001015009087", "Lerato Mokoena", "1980-01-01", "600101"),
    ("8101015009086", "Sipho Dlamini", "1981-01-01", "600102"),
    ("7505055009083", "Ann Naidoo", "1975-05-05", "600103"),
    ("6906065009082", "Johan Botha", "1969-06-06", "600104"),
    ("9002025009081", "Zanele Khumalo", "1990-02-02", "600105"),
    ("8803035009080", "Pieter Smit", "1988-03-03", "600106"),
]


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="seconds")


class Night:
    def __init__(self, host: Host) -> None:
        self.host = host
        self.pw = passwords()
        self.banks: dict[str, list[dict[str, Any]]] = {}
        self.emulators: dict[str, Lines] = {}
        self.api = ""
        self.signage = ""
        self.cashier_token = ""
        self.heats: dict[str, int] = {}
        self.tournaments: dict[str, int] = {}

    # 1. the host
    def init(self) -> None:
        self.host.run("db", "init", "--training")
        for name, role in ROLES.items():
            self.host.run("users", "add", name, "--role", role, "--password-stdin",
                          stdin=self.pw[name] + "\n")  # fmt: skip
        made = self.host.json("tokens", "create", "--user", "naledi", "--expires", "1",
                              "--label", "cash desk 2")  # fmt: skip
        self.cashier_token = made["token"]

    # 2. the technician
    def floor(self) -> None:
        def emulate(key: str, n: int) -> list[dict[str, Any]]:
            lines = self.host.start("emulate", "sas", "--machines", str(n), "--play",
                                    "--pace", "0.3", "--seed", str(len(self.emulators) + 1))  # fmt: skip
            self.emulators[key] = lines
            lines.until(lambda line: '"ready"' in line)
            return [json.loads(x) for x in lines.seen if '"endpoint"' in x]

        a = emulate("A", 3) + emulate("A-spare", 1)  # A04 alone: it will stop answering
        b = emulate("B", 3)
        rows = []
        for bank, machines in (("A", a), ("B", b)):
            ids = [f"{bank}0{i + 1}" for i in range(len(machines))]
            self.banks[bank] = [dict(m, id=i) for m, i in zip(machines, ids, strict=True)]
            found = ",\n".join(
                f'  {{ id = "{i}", endpoint = "{m["endpoint"]}" }}'
                for m, i in zip(machines, ids, strict=True)
            )
            rows.append(f'[[bank]]\nname = "{bank}"\nmachines = [\n{found},\n]\n')
        (self.host.work / "floor.toml").write_text("\n".join(rows))
        for bank in ("A", "B"):
            check = self.host.run("bank", "check", bank, "--floor", "floor.toml")
            assert "NO" not in check.stdout, check.stdout
            self.host.run("bank", "enable", bank, "--floor", "floor.toml")

    # 3. the director
    def schedule(self, lead: float) -> None:
        for key, bank in (("one", "A"), ("two", "B")):
            made = self.host.json("tournament", "create", f"Night {key}", "--validity", "48h")
            self.tournaments[key] = made["id"]
        start = datetime.now(UTC) + timedelta(seconds=lead)
        for key, bank in (("one", "A"), ("two", "B")):
            heat = self.host.json(
                "heat", "schedule", "-t", str(self.tournaments[key]), "--stage", "qualifying",
                "--start", _iso(start), "--bank", bank, "--seconds", str(HEAT_SECONDS),
                "--credits", "500",
            )  # fmt: skip
            self.heats[key] = heat["id"]

    def serve(self) -> None:
        lines = self.host.start("serve", "--floor", "floor.toml", "--spool", "spool",
                                "--tick", "0.2", "--http", "127.0.0.1:0",
                                "--signage-port", "0", "--log-level", "WARNING")  # fmt: skip
        self.api = lines.until(lambda x: x.startswith("api on ")).split()[-1]
        self.serve_lines = lines

    # 4. the remote desk
    def desk(self, *argv: str, ok: bool = True) -> Any:
        env = self.host.env(REELGATE_TOKEN=self.cashier_token)
        env.pop("REELGATE_DATABASE_URL")  # a desk host has no database
        done = self.host.run(*argv, "--server", self.api, "--json", env=env, ok=ok)
        return json.loads(done.stdout) if ok else done

    def sell(self) -> None:
        for id_number, name, dob, card in PLAYERS:
            self.desk("players", "add", "--id-number", id_number, "--name", name,
                      "--dob", dob, "--card", card)  # fmt: skip
        one, two = str(self.tournaments["one"]), str(self.tournaments["two"])
        for i, (id_number, *_rest) in enumerate(PLAYERS):
            tender = ["--card-payment"] if i == 0 else []
            self.desk("entries", "sell", id_number, "-t", one, "--reference", f"TILL-{100 + i}",
                      *tender)  # fmt: skip
            self.desk("heat", "register", str(self.heats["one"]), id_number)
        for i, (id_number, *_rest) in enumerate(PLAYERS[:3]):
            self.desk("entries", "sell", id_number, "-t", two, "--reference", f"TILL-{200 + i}")
            self.desk("heat", "register", str(self.heats["two"]), id_number)

    def heat(self, key: str) -> Any:
        return self.host.json("heat", "show", str(self.heats[key]))


def test_one_night_one_truth(empty_database: str, tmp_path: Path) -> None:
    host = Host(empty_database, tmp_path)
    night = Night(host)
    try:
        night.init()
        night.floor()
        night.schedule(lead=60)
        night.serve()
        night.sell()
        print(json.dumps(night.heat("one"), indent=1))
    finally:
        codes = list(host.stop_all())
    assert codes
