"""amqtt is the optional ``embedded`` extra: without it, the paths that start an embedded
broker say which extra to install, in one line; nothing else needs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gateway.app.cli import main

ROOT = Path(__file__).resolve().parents[3]
HINT = "pip install 'reelgate[embedded]'"


@pytest.fixture
def no_amqtt(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a production host: importing amqtt fails."""
    for name in [m for m in sys.modules if m.startswith(("amqtt", "protocols.mqtt.broker"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "amqtt", None)  # import amqtt -> ModuleNotFoundError


@pytest.mark.usefixtures("no_amqtt")
@pytest.mark.parametrize(
    "argv",
    [["demo", "--mqtt", "embedded", "--seconds", "3"], ["emulate", "mqtt", "--machines", "1"]],
    ids=["demo", "emulate-mqtt"],
)
def test_the_embedded_broker_without_amqtt_is_one_line_naming_the_extra(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert HINT in err


def test_the_gateway_runs_without_amqtt() -> None:
    """serve, the API, the signs and the demo's own path never import the broker."""
    code = (
        "import sys; sys.modules['amqtt'] = None;"
        "import gateway.app.demo, gateway.app.commands.serve, gateway.app.gateway,"
        " gateway.app.commands.signage, gateway.app.commands.api, gateway.web.api;"
        "print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.stdout.strip() == "ok", done.stderr
