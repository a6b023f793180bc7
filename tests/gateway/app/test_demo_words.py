"""The demo's "what next" (issue 24, problem 10): commands that run as written."""

from __future__ import annotations

import shlex
from pathlib import Path

from gateway.app.cli import build_parser
from gateway.app.demo import what_next


def test_what_next_commands_parse_and_name_the_kept_database(tmp_path: Path) -> None:
    lines = what_next(tmp_path, keep=True)
    commands = [x.strip() for x in lines if x.strip().startswith("reelgate ")]
    assert len(commands) == 2
    for command in commands:
        argv = shlex.split(command)[1:]
        args = build_parser(argv[0]).parse_args(argv)  # exits 2 on a bad example
        assert args.database == f"sqlite:///{tmp_path / 'reelgate.db'}"


def test_without_keep_it_says_how_to_keep_the_folder(tmp_path: Path) -> None:
    said = "\n".join(what_next(tmp_path, keep=False))
    assert "reelgate demo --keep" in said
    assert str(tmp_path) not in said  # the folder is gone: no command points at it
