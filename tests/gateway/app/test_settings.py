"""The configuration file: typed settings, the environment over the file, flags over both,
one line naming the file (or variable) and the key for every mistake; ``config check`` and
``config show`` (secrets masked); the shipped example validates."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.app import configfile
from gateway.app.cli import build_parser, main
from gateway.app.settings import load_settings, mask_url_password

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "deploy" / "reelgate.example.toml"


@pytest.fixture(autouse=True)
def _no_ambient(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No REELGATE_* from the test run (its PG/Mosquitto URLs) and no /etc file."""
    import os

    for name in [n for n in os.environ if n.startswith("REELGATE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(configfile, "DEFAULT_FILE", tmp_path / "absent.toml")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "reelgate.toml"
    path.write_text(text)
    return path


def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err.strip()


def test_the_shipped_example_validates() -> None:
    settings = load_settings(EXAMPLE)
    assert settings.database.url == "postgresql://reelgate@127.0.0.1/reelgate"
    assert settings.mqtt.url == "mqtt://127.0.0.1:1883"
    assert settings.log.format == "json"
    assert settings.venue.time_zone == "Africa/Johannesburg"
    assert settings.serve.floor == Path("/etc/reelgate/floor.toml")
    assert settings.http.listen == "127.0.0.1:8443"


def test_defaults_without_a_file() -> None:
    settings = load_settings(None)
    assert settings.database.url is None  # storage.db's ./reelgate.db
    assert settings.log.format == "kv"
    assert settings.serve.poll_interval == 0.2
    assert settings.venue.name == "venue"


@pytest.mark.parametrize(
    ("text", "key", "why"),
    [
        ('[http]\nlisten = "nowhere"\n', "http.listen", "HOST:PORT"),
        ('[http]\nlisen = "127.0.0.1:1"\n', "http.lisen", "unknown key"),
        ('[http]\ntls_cert = "c.pem"\n', "http", "go together"),
        ('[log]\nformat = "xml"\n', "log.format", "json"),
        ('[venue]\ntime_zone = "Mars/Base"\n', "venue.time_zone", "not a time zone"),
        ('[venue]\nname = "a b"\n', "venue.name", "letters, digits"),
        ("[serve]\npoll_interval = 0.1\n", "serve.poll_interval", "0.2"),
        ("[serve]\nlease_period = 0\n", "serve.lease_period", "0.3"),
        ('[database]\nurl = "mysql://x/y"\n', "database.url", "postgresql"),
        ('[mqtt]\nurl = "http://x"\n', "mqtt.url", "mqtt://"),
        ("[signage]\nport = 70000\n", "signage.port", "65535"),
        ("[nosuch]\n", "nosuch", "unknown key"),
        ("http = 3\n", "http", "table"),
    ],
)
def test_a_bad_key_is_one_line_naming_the_file_and_the_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, key: str, why: str
) -> None:
    path = _write(tmp_path, text)
    err = _error(capsys, ["config", "check", "--config", str(path)])
    assert err.startswith(f"reelgate: error: {path}: {key}"), err
    assert why in err


def test_not_toml_and_no_such_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _write(tmp_path, "[venue\n")
    assert "not TOML" in _error(capsys, ["config", "check", "--config", str(path)])
    missing = tmp_path / "nope.toml"
    assert "no such file" in _error(capsys, ["config", "show", "--config", str(missing)])


def test_the_environment_wins_over_the_file_and_is_named_in_errors(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path, '[mqtt]\nurl = "mqtt://127.0.0.1:1"\n[serve]\ntick = 1.0\n')
    monkeypatch.setenv("REELGATE_MQTT_URL", "mqtt://127.0.0.1:2")
    monkeypatch.setenv("REELGATE_SERVE_POLL_INTERVAL", "0.5")  # a key with its own "_"
    monkeypatch.setenv("REELGATE_SNMP_SECRETS", "/etc/reelgate/snmp.toml")  # older name
    settings = load_settings(path)
    assert settings.mqtt.url == "mqtt://127.0.0.1:2"
    assert settings.serve.poll_interval == 0.5
    assert settings.serve.tick == 1.0
    assert settings.serve.snmp_secrets == Path("/etc/reelgate/snmp.toml")
    monkeypatch.setenv("REELGATE_HTTP_LISTEN", "127.0.0.1:x")
    err = _error(capsys, ["config", "check", "--config", str(path)])
    assert err.startswith("reelgate: error: $REELGATE_HTTP_LISTEN: http.listen:"), err


def test_reelgate_config_names_the_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path, '[venue]\nname = "ridge"\n')
    monkeypatch.setenv("REELGATE_CONFIG", str(path))
    assert main(["config", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["file"] == str(path)
    assert shown["settings"]["venue"]["name"] == "ridge"


def test_show_masks_passwords(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '[database]\nurl = "postgresql://gw:pg-secret@db.internal/reelgate"\n'
        '[mqtt]\nurl = "mqtts://board:mq-secret@broker.internal:8883"\n'
        '[records]\naudit_key_file = "/etc/reelgate/keys/audit.key"\n',
    )
    capsys.readouterr()
    assert main(["config", "show", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "pg-secret" not in out
    assert "mq-secret" not in out
    assert 'url = "postgresql://gw:***@db.internal/reelgate"' in out
    assert 'audit_key_file = "/etc/reelgate/keys/audit.key"' in out  # a file's name is shown
    assert mask_url_password("postgresql://h/db?password=x&ssl=1") == (
        "postgresql://h/db?password=***&ssl=1"
    )


def test_check_finds_the_files_it_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    floor = tmp_path / "floor.toml"
    path = _write(tmp_path, f'[serve]\nfloor = "{floor}"\nspool = "{tmp_path / "j.spool"}"\n')
    assert "serve.floor: no such file" in _error(capsys, ["config", "check", "--config", str(path)])
    floor.write_text("")
    assert main(["config", "check", "--config", str(path)]) == 0
    assert capsys.readouterr().out.strip() == f"{path}: ok"


def test_database_comes_from_the_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "from-config.db"
    path = _write(tmp_path, f'[database]\nurl = "sqlite:///{db}"\n')
    assert main(["db", "upgrade", "--config", str(path)]) == 0
    assert db.exists()
    assert main(["tournament", "list", "--config", str(path), "--json"]) == 0
    other = tmp_path / "flag.db"
    assert main(["db", "upgrade", "--config", str(path), "--database", f"sqlite:///{other}"]) == 0
    assert other.exists()  # the flag wins


def test_serve_takes_its_options_from_the_configuration(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import argparse

    from gateway.app.commands import serve as serve_command

    path = _write(
        tmp_path,
        '[serve]\nfloor = "f.toml"\ntick = 1.5\nstandby = true\n'
        '[mqtt]\nurl = "mqtt://127.0.0.1:1883"\n[venue]\nname = "ridge"\n'
        '[http]\nlisten = "127.0.0.1:0"\n',
    )
    monkeypatch.setenv("REELGATE_MQTT_URL", "mqtt://127.0.0.1:1884")
    parser = argparse.ArgumentParser()
    serve_command.register(parser.add_subparsers())
    args = parser.parse_args(["serve", "--config", str(path), "--tick", "0.3"])
    serve_command.check_arguments(args)
    assert args.floor == "f.toml"
    assert args.tick == 0.3  # the flag wins
    assert args.mqtt == "mqtt://127.0.0.1:1884"  # the environment over the file
    assert args.site == "ridge"
    assert args.standby is True
    assert args.http == "127.0.0.1:0"
    assert args.poll_interval == 0.2


def test_serve_without_a_floor_anywhere_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--floor" in _error(capsys, ["serve"])


def test_version() -> None:
    done = subprocess.run([sys.executable, "-m", "gateway", "--version"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0
    assert done.stdout.startswith("reelgate ")


def test_a_quick_command_loads_no_settings_model_without_a_file(tmp_path: Path) -> None:
    code = (
        "import sys; from gateway.app import configfile, cli;"
        f"configfile.DEFAULT_FILE = configfile.Path({str(tmp_path / 'absent')!r});"
        "cli.main(['tournament', 'list', '--database', 'sqlite:///nowhere/x.db']);"
        "print('pydantic_settings' in sys.modules)"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, env=env).stdout  # fmt: skip
    assert out.strip() == "False"


def test_the_record_keys_named_in_records_are_the_ones_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # [records] audit_key_file / signing_key_file reach the audit chain and the exports;
    # an explicit REELGATE_*_KEY_FILE variable still wins over the file.
    monkeypatch.delenv("REELGATE_AUDIT_KEY_FILE", raising=False)
    monkeypatch.delenv("REELGATE_SIGNING_KEY_FILE", raising=False)
    keys = tmp_path / "keys"
    path = _write(
        tmp_path,
        f'[records]\naudit_key_file = "{keys / "audit.key"}"\n'
        f'signing_key_file = "{keys / "signing.key"}"\n',
    )
    args = main_args(["tournament", "list", "--config", str(path)])
    configfile.apply_config(args)
    assert os.environ["REELGATE_AUDIT_KEY_FILE"] == str(keys / "audit.key")
    assert os.environ["REELGATE_SIGNING_KEY_FILE"] == str(keys / "signing.key")
    monkeypatch.setenv("REELGATE_AUDIT_KEY_FILE", "/elsewhere/audit.key")
    configfile.apply_config(main_args(["tournament", "list", "--config", str(path)]))
    assert os.environ["REELGATE_AUDIT_KEY_FILE"] == "/elsewhere/audit.key"


def main_args(argv: list[str]) -> argparse.Namespace:
    return build_parser(argv[0]).parse_args(argv)


def test_the_witness_named_in_records_is_checked_and_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """25.1: ``[records] witness`` is one line when wrong, reaches the audit chain's
    witness when right (the variable wins), and is refused in the keys' folder."""
    bad = _write(tmp_path, '[records]\nwitness = "syslog://10.0.0.12:514"\n')
    err = _error(capsys, ["tournament", "list", "--config", str(bad)])
    assert err.endswith(
        "records.witness: must be a file path, syslog+udp://HOST:PORT, "
        "syslog+tcp://HOST:PORT or none"
    )
    path = _write(tmp_path, '[records]\nwitness = "syslog+tcp://10.0.0.12:6514"\n')
    configfile.apply_config(main_args(["tournament", "list", "--config", str(path)]))
    assert os.environ["REELGATE_AUDIT_WITNESS"] == "syslog+tcp://10.0.0.12:6514"
    monkeypatch.delenv("REELGATE_AUDIT_WITNESS")

    db = tmp_path / "venue.db"
    assert main(["db", "upgrade", "--database", f"sqlite:///{db}"]) == 0
    monkeypatch.setenv("REELGATE_AUDIT_WITNESS", str(tmp_path / "venue.db.keys" / "w"))
    err = _error(capsys, ["tournament", "list", "--database", f"sqlite:///{db}"])
    assert "the witness must not be kept in the keys folder" in err
