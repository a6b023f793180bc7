"""``reelgate cashup`` on a SQLite file: cash and card sales, a comp (T5) and a refund
(T23) by two cashiers; the table, ``--json``, ``--cashier``; a sale edited straight in
the database is shown loudly and the command exits 1."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from gateway.app import identity
from gateway.app.cli import main

from ..tournament.test_cli import _seed_floor
from ..training_db import PASSWORD, add_accounts, cheap_hashes, make_training, type_passwords

ANN, BEN = "8001015009087", "8101015009086"


def test_cashup_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cli.db"
    url = f"sqlite+aiosqlite:///{path}"
    _seed_floor(url)
    make_training(url)  # the sales are keyed on past days
    cheap_hashes(monkeypatch)
    # The refund's two people (dual control): its cashier signs in, a supervisor approves.
    add_accounts(url, ("thandi", "cashier"), ("sam", "supervisor"))
    db = ["--database", url]
    host = socket.gethostname()
    thandi, sipho = f"os:thandi@{host}", f"os:sipho@{host}"

    def at_till(account: str) -> None:
        """The next writes come from this operating-system account (two cashiers)."""
        monkeypatch.setattr(identity, "os_account", lambda: account)

    def ok(*argv: str, json_out: bool = True) -> Any:
        capsys.readouterr()
        assert main([*argv, *db, *(["--json"] if json_out else [])]) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        return json.loads(out) if json_out else out

    ok("tournament", "create", "Ridge")
    for id_number, name in ((ANN, "Ann"), (BEN, "Ben")):
        ok("players", "add", "--id-number", id_number, "--name", name, "--dob", "1980-01-01")
    sell = ("entries", "sell", "-t", "Ridge", "--now")
    at_till("thandi")
    ok(*sell, "2026-11-02 12:00", ANN)
    at_till("sipho")
    ok(*sell, "2026-11-02 12:05", BEN, "--quantity", "2", "--card-payment")
    ok(*sell, "2026-11-02 12:10", BEN, "--complimentary")
    at_till("thandi")
    ok(*sell, "2026-11-03 09:00", ANN)  # the next day
    entries = ok("entries", "list", "-t", "Ridge", BEN)
    type_passwords(monkeypatch, PASSWORD, PASSWORD)
    ok("entries", "refund", str(entries[0]["entry"]), "--rule", "23", "--reason", "changed mind",
       "--now", "2026-11-02 15:00", "--as", "thandi", "--second", "sam")  # fmt: skip

    report = ok("cashup", "--date", "2026-11-02", "--desk", "till 1")
    assert report["reconciliation"]["ok"] is True
    by = {x["cashier"]: x for x in report["by_cashier"]}
    assert by[thandi]["entries_sold"] == {"purchases": 1, "seats": 1, "amount_cents": 5000}
    # The refund is the signed-in account's, not the till's host login.
    assert by["thandi"]["entries_refunded"] == {"entries": 1, "amount_cents": 5000}
    assert by[sipho]["entries_sold"] == {"purchases": 1, "seats": 2, "amount_cents": 10_000}
    assert by[sipho]["entries_complimentary"] == {"purchases": 1, "seats": 1}
    assert report["totals"]["net_cents"] == 10_000
    assert report["training"] is True
    assert ok("cashup", "--date", "2026-11-02", "--cashier", sipho)["totals"]["net_cents"] == (
        10_000
    )
    table = ok("cashup", "--date", "2026-11-02", json_out=False)
    assert "reconciled: stored rows summed; SQL totals; audit-log rows" in table
    assert "R100.00" in table

    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE entry_purchases SET amount_cents = 1000 WHERE cashier = ?"
                     " AND kind = 'card'", (sipho,))  # fmt: skip
    capsys.readouterr()
    assert main(["cashup", "--date", "2026-11-02", *db]) == 1
    out, err = capsys.readouterr()
    assert "!!! NOT RECONCILED: 1 mismatch(es) !!!" in out
    assert err.startswith("reelgate: RECONCILIATION MISMATCH: purchase 2 (card, tournament 1): "
                          f"stored 1000 c by {sipho}, audit row")  # fmt: skip
    capsys.readouterr()
    assert main(["cashup", "--date", "2026-11-31", *db]) == 2
    assert capsys.readouterr().err.strip() == (
        "reelgate: error: date: '2026-11-31' is not a date (YYYY-MM-DD)"
    )
