"""The command examples of README.md and docs/guide/*.md run as written (issue 24,
problem 10): each ``reelgate …`` line of their ``sh`` blocks is parsed by the real
argument parser, so an example naming a subcommand or a flag that does not exist, or
leaving out a required argument (``tournament standings --json`` with no tournament),
fails here.  Lines that are placeholders (``...``, ``[optional parts]``, ``<…>``) are
skipped by rule, not by a list: an example is either a command or visibly a pattern.

The README's technician session is also run for real on loopback (its emulator line
writes the floor file the next lines use): see
``test_readme_technician_session_runs_as_written``."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from gateway.app.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
_BLOCK = re.compile(r"^```(?:sh|bash|console)\n(.*?)^```", re.S | re.M)
_PATTERN = re.compile(r"\.\.\.|…|\[|<[A-Za-z]|\|")


def _commands(text: str) -> list[str]:
    """Every ``reelgate`` command of the sh blocks: continuations joined, comments and
    prompts dropped, ``;``-separated commands apart."""
    out = []
    for block in _BLOCK.findall(text):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ").removeprefix("sudo ")
            for part in _split_commands(line):
                if part.startswith("reelgate ") and not _PATTERN.search(part):
                    out.append(part)
    return out


def _split_commands(line: str) -> list[str]:
    """The line cut at ``;``, ``&&`` and a trailing comment, outside quotes."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
    except ValueError:
        return [line]
    parts: list[list[str]] = [[]]
    for token in tokens:
        if token in (";", "&&", "&"):
            parts.append([])
        else:
            parts[-1].append(token)
    return [shlex.join(p) for p in parts if p]


EXAMPLES = [
    pytest.param(doc, command, id=f"{doc.name}:{command[:60]}")
    for doc in DOCS
    for command in _commands(doc.read_text(encoding="utf-8"))
]


def test_the_docs_have_examples() -> None:
    assert len(EXAMPLES) > 50  # the extractor found the guides' commands


@pytest.mark.parametrize(("doc", "command"), EXAMPLES)
def test_example_parses_with_the_real_parser(doc: Path, command: str) -> None:
    argv = shlex.split(command)[1:]
    parser = build_parser(argv[0] if argv else None)
    try:
        parser.parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{doc.relative_to(ROOT)}: `{command}` does not parse (exit {exc.code})")


def _technician_session() -> list[tuple[str, bool]]:
    """The README's technician block up to its first pattern line (``[--exclude …]``):
    the commands a reader runs first, in order, and whether each runs in the background."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(b for b in _BLOCK.findall(text) if "reelgate emulate sas" in b)
    lines = []
    for raw in block.splitlines():
        command = _split_commands(raw)[0]
        if _PATTERN.search(command):
            break
        lines.append((command, bool(re.search(r"&\s*(#.*)?$", raw))))
    return lines


def test_readme_technician_session_runs_as_written(tmp_path: Path) -> None:
    """``db upgrade``, the emulator (in the background, as the ``&`` says), ``sas probe``
    on the port it names and ``bank check`` on the floor file it wrote — each exits 0."""
    import os
    import socket
    import subprocess
    import sys

    lines = _technician_session()
    assert [shlex.split(x)[1] for x, _ in lines] == ["db", "emulate", "sas", "bank"]
    with socket.socket() as probe:  # the example names its ports; another run may hold them
        if probe.connect_ex(("127.0.0.1", 7001)) == 0:
            pytest.skip("127.0.0.1:7001 is in use on this host")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REELGATE_")}
    env["PYTHONPATH"] = str(ROOT)

    def argv(line: str) -> list[str]:
        return [sys.executable, "-m", "gateway", *shlex.split(line)[1:]]

    emulator = None
    try:
        for line, background in lines:
            if background:
                emulator = subprocess.Popen(
                    [*argv(line), "--duration", "120"], cwd=tmp_path, env=env,
                    stdout=subprocess.PIPE, text=True,
                )  # fmt: skip
                assert emulator.stdout is not None
                for out in emulator.stdout:  # its ready line comes after the floor file
                    if '"ready"' in out:
                        break
                continue
            done = subprocess.run(argv(line), cwd=tmp_path, env=env, capture_output=True,
                                  text=True, timeout=120)  # fmt: skip
            assert done.returncode == 0, f"`{line}`: {done.stderr}"
        assert (tmp_path / "floor.toml").exists()
    finally:
        if emulator is not None:
            emulator.terminate()
            emulator.wait(timeout=20)
