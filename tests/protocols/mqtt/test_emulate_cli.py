"""``reelgate emulate mqtt``: operator mistakes are one line; a short run serves boards."""

from __future__ import annotations

import re

import pytest

from gateway.app.cli import main


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--machines", "0"], "--machines must be 1-2000"),
        (["--site", "a/b"], "--site/--prefix"),
        (["--broker", "http://127.0.0.1"], "--broker"),
    ],
)
def test_operator_mistakes(
    args: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["emulate", "mqtt", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("reelgate: error: ")
    assert complaint in err
    assert err.count("\n") == 1


def test_short_run_with_embedded_broker_and_snmp(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "emulate",
            "mqtt",
            "--machines",
            "2",
            "--site",
            "clitest",
            "--play",
            "--snmp",
            "--duration",
            "0.5",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    url = re.search(r"embedded MQTT broker at (mqtt://127\.0\.0\.1:\d+)", out)
    assert url is not None
    assert f"M001 {url.group(1)}/clitest/M001" in out
    assert f"M002 {url.group(1)}/clitest/M002" in out
    assert re.search(r"M002 snmp udp 127\.0\.0\.1:\d+", out)


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--snmp-v3", "ops:short:short"], "at least 8 characters"),
        (["--snmp-v3", "ops-only"], "USER:AUTHKEY:PRIVKEY"),
        (["--snmp-traps", "10.0.0.1:162"], "loopback only"),
        (["--snmp-traps", "127.0.0.1:x"], "HOST:PORT"),
    ],
)
def test_snmp_option_mistakes(
    args: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["emulate", "mqtt", "--snmp", *args]) == 2
    assert complaint in capsys.readouterr().err


def test_cards_through_the_control_channel(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30 item 1: ``--control stdin`` puts players' cards in and pulls them; a bad
    line is one line and changes nothing."""
    import io

    lines = "card-in M001 6009100000000001\ncard-swipe M001\ncard-out M001\ncard-out M001\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    code = main(["emulate", "mqtt", "--machines", "1", "--site", "clicards", "--control",
                 "stdin", "--duration", "1.0"])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "M001: card 6009100000000001 in" in out
    assert "control: expected card-in MACHINE CARD or card-out MACHINE" in out
    assert "M001: card 6009100000000001 out" in out
    assert "M001: no card in" in out
