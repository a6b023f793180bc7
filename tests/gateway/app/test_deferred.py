"""A handler named by :class:`Deferred` is imported only when it is called."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gateway.app.deferred import Deferred


def test_the_handler_is_found_and_called() -> None:
    d = Deferred("gateway.app.commands.tournament_handlers:list_")
    assert d.resolve().__name__ == "list_"
    assert Deferred("os.path:basename").resolve() is __import__("os").path.basename


@pytest.mark.parametrize("target", ["", "gateway", "gateway:", ":x", "a.b:not a name"])
def test_a_malformed_target_is_refused_when_named(target: str) -> None:
    with pytest.raises(ValueError, match=r"expected 'package\.module:function'"):
        Deferred(target)


def test_building_the_tournament_parser_imports_no_database_layer() -> None:
    code = (
        "import sys; from gateway.app.cli import build_parser;"
        "p = build_parser('tournament'); p.parse_args(['tournament', 'list']);"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('sqlalchemy', 'httpx') or m.startswith('gateway.tournament.services')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout  # fmt: skip
    assert out.strip() == "[]", out
