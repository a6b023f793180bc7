"""Every bad input is one line on stderr and a non-zero exit, with the database
unchanged; ``db upgrade``/``db check``; a database at another revision is refused with
the fix; output survives a closed pipe; the command table matches the modules."""

from __future__ import annotations

import ast
import asyncio
import hashlib
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.app import cli
from gateway.app.cli import COMMANDS, main
from gateway.app.database import head_revision, revision_of
from storage.db import make_engine
from storage.migrate import downgrade_async

ROOT = Path(__file__).resolve().parents[3]
CLOSED = "postgresql://postgres@127.0.0.1:1/x"  # a closed loopback port

# One command of each family that opens the database.
OPENERS = [
    ["tournament", "list"],
    ["bank", "check", "A"],
    ["super9", "calendar"],
    ["audit", "verify"],
    ["heat", "list", "-t", "1"],
    ["players", "list"],
    ["heat", "recover", "--bank", "A"],
    ["cashup", "--date", "2026-11-02"],
]


def _one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0, argv
    assert err.count("\n") == 1, err
    assert err.startswith("reelgate: error: "), err
    return err


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    assert main(["db", "upgrade", "--database", url]) == 0
    capsys.readouterr()
    return url


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("argv", OPENERS, ids=lambda a: " ".join(a[:2]))
def test_unreachable_or_bad_database_is_one_line(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    not_db = tmp_path / "not.db"
    not_db.write_bytes(b"this is not a database at all" * 10)
    before = _digest(not_db)
    for url, says in (
        (f"sqlite:///{tmp_path / 'no' / 'such' / 'x.db'}", "does not exist"),
        (CLOSED, "cannot open"),
        ("mysql://h/x", "unknown scheme"),
        (f"sqlite:///{not_db}", "not a database"),
        (f"sqlite:///{tmp_path / 'missing.db'}", "reelgate db upgrade"),
    ):
        assert says in _one_line_error(capsys, [*argv, "--database", url])
    assert _digest(not_db) == before
    assert not (tmp_path / "missing.db").exists()  # never created silently
    assert not Path("reelgate.db").exists()


def test_no_default_database_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REELGATE_DATABASE_URL", raising=False)
    assert "reelgate db upgrade" in _one_line_error(capsys, ["tournament", "list"])
    assert not (tmp_path / "reelgate.db").exists()


def test_bad_argument_values_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["heat", "run", "--floor", "f", "--bank", "A", "--seconds", "five", "--credits", "1"],
        ["tournament", "list", "--nope"],
        ["super9", "calendar", "--days", "many"],
        ["bank"],
        ["nosuchcommand"],
        ["db", "check", "--database"],
        ["audit", "show", "--limit", "x"],
        ["heats", "list", "-t", "1"],  # old spellings are gone: one `heat`, one `--actor`
        ["super9", "sell", "--ticket", "1", "--player", "p", "--by", "cashier"],
    ):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        err = capsys.readouterr().err
        assert exit_.value.code == 2, (argv, err)
        assert err.count("\n") == 1, (argv, err)


def test_bad_floor_files_store_nothing(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = Path(db.removeprefix("sqlite:///"))
    before = _digest(file)
    floor = tmp_path / "floor.toml"
    floor.write_bytes(b'[[bank]]\nname = "A\xff"\nmachines = []\n')
    assert "not UTF-8" in _one_line_error(capsys, ["bank", "check", "A", "--database", db,
                                                   "--floor", str(floor)])  # fmt: skip
    # The second machine's endpoint is bad: the first is not stored either.
    floor.write_text(
        '[[bank]]\nname = "A"\nmachines = [\n'
        '  { id = "A1", endpoint = "sas+tcp://127.0.0.1:7001?address=1" },\n'
        '  { id = "A2", endpoint = "telnet://127.0.0.1:7002" },\n]\n'
    )
    err = _one_line_error(capsys, ["bank", "check", "A", "--database", db, "--floor", str(floor)])
    assert "A2" in err
    assert "unknown scheme" in err
    assert _digest(file) == before
    err = _one_line_error(capsys, ["bank", "add-machine", "A", "A3", "--endpoint",
                                   "sas+tcp://127.0.0.1:notaport", "--database", db])  # fmt: skip
    assert "A3" in err
    assert _digest(file) == before


def test_db_upgrade_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    assert main(["db", "check", "--database", url]) == 2  # no file yet: one line
    capsys.readouterr()
    assert main(["db", "upgrade", "--database", url]) == 0
    assert f"(empty) -> {head_revision()}" in capsys.readouterr().out
    assert main(["db", "check", "--database", url]) == 0
    assert head_revision() in capsys.readouterr().out
    assert main(["db", "upgrade", "--database", url]) == 0  # idempotent
    assert f"{head_revision()} -> {head_revision()}" in capsys.readouterr().out


def test_other_revision_is_refused_with_the_fix(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    async def step_back() -> None:
        engine = make_engine(db.replace("sqlite:", "sqlite+aiosqlite:"))
        try:
            await downgrade_async(engine, "-1")
        finally:
            await engine.dispose()

    asyncio.run(step_back())
    head = head_revision()
    # The revision before the head (ids may skip a number until the branches are chained).
    previous = asyncio.run(revision_of(db))
    assert previous is not None
    assert previous < head
    assert main(["db", "check", "--database", db]) == 1
    capsys.readouterr()
    for argv in OPENERS[:4]:
        err = _one_line_error(capsys, [*argv, "--database", db])
        assert f"database is at revision {previous}, this reelgate needs {head}" in err
        assert "run reelgate db upgrade" in err
    assert main(["db", "upgrade", "--database", db]) == 0
    assert main(["tournament", "list", "--database", db]) == 0


def test_output_survives_a_closed_pipe(db: str) -> None:
    for argv in (["tournament", "list", "--database", db], ["--help"]):
        cmd = [sys.executable, "-m", "gateway", *argv]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stderr is not None
        proc.stdout.close()  # like `| head -0`: the reader is gone before the output
        err = proc.stderr.read().decode()
        proc.wait(timeout=60)
        assert "Traceback" not in err, err
        assert "BrokenPipeError" not in err, err


def test_command_table_matches_the_modules() -> None:
    import argparse

    for name, (module_name, _help) in COMMANDS.items():
        module = importlib.import_module(f"gateway.app.commands.{module_name}")
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers(dest="command")
        module.register(sub)
        assert name in sub.choices, name


def test_only_the_chosen_command_is_imported() -> None:
    code = (
        "import sys; from gateway.app.cli import build_parser; build_parser('tournament');"
        "print(sorted(m for m in sys.modules if m.startswith('gateway.app.commands.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=60).stdout  # fmt: skip
    imported = ast.literal_eval(out.strip())
    # The tournament command and its own sub-command module (prizes), nothing of another.
    assert "gateway.app.commands.tournament" in imported
    assert set(imported) <= {
        "gateway.app.commands.tournament",
        "gateway.app.commands.tournament_prizes",
    }
    assert cli.build_parser(None).format_help().count("heat") >= 1
