"""``reelgate db init --training``: a training database for good — no command clears or
changes the mark, and a backup of it restores as a training database."""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
from pathlib import Path

import pytest

from gateway.app.cli import COMMANDS, build_parser, main
from storage.database_mark import is_training
from storage.db import make_engine, make_sessionmaker


def _training(url: str) -> bool:
    async def go() -> bool:
        engine = make_engine(url)
        try:
            async with make_sessionmaker(engine)() as session:
                return await is_training(session)
        finally:
            await engine.dispose()

    return asyncio.run(go())


def test_the_training_mark_survives_every_db_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'rehearsal.db'}"
    assert main(["db", "init", "--training", "--database", url]) == 0
    out, err = capsys.readouterr()
    assert "training database" in out
    assert "TRAINING database" in err
    assert main(["db", "init", "--database", url]) == 2  # never promoted to production
    assert "its kind is permanent" in capsys.readouterr().err
    assert main(["db", "upgrade", "--database", url]) == 0
    assert main(["db", "init", "--training", "--database", url]) == 0  # already: no change
    assert main(["db", "check", "--database", url]) == 0
    assert "training database" in capsys.readouterr().out
    assert _training(url)


def test_a_production_database_cannot_become_a_training_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'venue.db'}"
    assert main(["db", "init", "--database", url]) == 0
    assert main(["db", "init", "--training", "--database", url]) == 2
    assert "only a new, empty database" in capsys.readouterr().err
    assert not _training(url)


def test_a_backup_of_a_training_database_restores_as_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, copy = tmp_path / "rehearsal.db", tmp_path / "restored.db"
    assert main(["db", "init", "--training", "--database", f"sqlite:///{source}"]) == 0
    with sqlite3.connect(source) as live, sqlite3.connect(copy) as restored:
        live.backup(restored)  # SQLite's online backup, as a nightly job takes it
    assert _training(f"sqlite+aiosqlite:///{copy}")
    assert main(["db", "check", "--database", f"sqlite:///{copy}"]) == 0
    assert "training database" in capsys.readouterr().out


def _options(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, str]]:
    found = [(path, o) for a in parser._actions for o in a.option_strings]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += _options(child, f"{path} {name}")
    return found


def test_no_command_offers_to_clear_or_change_the_mark() -> None:
    """The only options about the mark are ``db init --training`` and the first
    account's ``users add --training`` (issue 26), which set it on a new database."""
    about_the_mark = [
        (path, option)
        for command in COMMANDS
        for path, option in _options(build_parser(command), "reelgate")
        if path.split()[1:2] == [command]
        and any(word in option for word in ("training", "production", "mark"))
        and option != "--clear-mark"  # bank clear-mark: an SNMP trap mark, not this one
    ]
    assert sorted(about_the_mark) == [
        ("reelgate db init", "--training"),
        ("reelgate users add", "--training"),
    ]
