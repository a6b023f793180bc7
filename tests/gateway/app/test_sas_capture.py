"""``--capture FILE`` on every command that talks SAS: a file that cannot be written is
one line and a non-zero exit, before anything is opened (issue 28; docs/sas.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.app.cli import main
from gateway.app.sas_capture import port_file

EP = "sas+tcp://127.0.0.1:9?address=1"


@pytest.mark.parametrize(
    "argv",
    [
        ["sas", "probe", EP],
        ["sas", "conformance", EP],
        ["serve", "--floor", "floor.toml"],
        [
            "heat",
            "run",
            "--floor",
            "floor.toml",
            "--bank",
            "A",
            "--seconds",
            "5",
            "--credits",
            "100",
        ],
        ["board", "--sas", EP, "--mqtt", "mqtt://127.0.0.1:1", "--site", "s", "--board-id", "A01"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
@pytest.mark.parametrize(
    ("extra", "complaint"),
    [
        (["--capture", "{tmp}/no/such/c.jsonl"], "no such folder"),
        (["--capture", "{tmp}/c.jsonl", "--capture-max-bytes", "10"], "at least 1024"),
        (["--capture", "{tmp}/c.jsonl", "--capture-keep", "-1"], "0 or more"),
    ],
)
def test_a_capture_that_cannot_be_written_is_one_line(
    argv: list[str],
    extra: list[str],
    complaint: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    capsys.readouterr()
    code = main([*argv, *(x.replace("{tmp}", str(tmp_path)) for x in extra)])
    err = capsys.readouterr().err
    assert code != 0
    assert err.count("\n") == 1, err
    assert complaint in err
    assert list(tmp_path.iterdir()) == []  # nothing written, nothing opened


def test_one_file_per_port_is_named_after_the_port() -> None:
    assert port_file("c.jsonl", "sas+tcp://127.0.0.1:7001").name == "c.jsonl.127.0.0.1_7001"
    assert port_file("c.jsonl", "sas+serial:///dev/ttyUSB0").name == "c.jsonl.dev_ttyUSB0"


def test_the_cli_capture_defaults_are_the_taps() -> None:
    """The parsers' defaults live apart from the tap (no SAS code to build a parser)."""
    from gateway.app import capture_args
    from protocols.sas.carriers import tap

    assert capture_args.DEFAULT_MAX_BYTES == tap.DEFAULT_MAX_BYTES
    assert capture_args.DEFAULT_KEEP == tap.DEFAULT_KEEP
