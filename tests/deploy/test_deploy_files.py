"""The files in ``deploy/``: the compose file parses and wires the gateway, a sign,
PostgreSQL and Mosquitto with volumes and health checks; the image runs as a non-root
user from Debian slim Python; the systemd units run as ``reelgate`` with the commands
the operator guides name."""

from __future__ import annotations

import configparser
from pathlib import Path
from typing import Any

import pytest

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _unit(name: str) -> configparser.ConfigParser:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    unit.read_string((DEPLOY / name).read_text())
    return unit


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return loaded


def test_compose_has_the_four_services_with_health_checks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"gateway", "signage", "postgres", "mosquitto"}
    for name, service in services.items():
        assert "healthcheck" in service, name
        assert service["healthcheck"]["test"], name
    gateway = services["gateway"]
    assert gateway["command"][0] == "serve"
    assert "/healthz" in " ".join(gateway["healthcheck"]["test"])
    port = gateway["environment"]["REELGATE_HTTP_LISTEN"].rsplit(":", 1)[1]
    assert f":{port}/healthz" in " ".join(gateway["healthcheck"]["test"])  # the API's port
    assert {"postgres", "mosquitto"} <= set(gateway["depends_on"])
    assert gateway["environment"]["REELGATE_DATABASE_URL"].startswith("postgresql://")
    assert gateway["environment"]["REELGATE_MQTT_URL"] == "mqtt://mosquitto:1883"
    assert services["signage"]["command"][0] == "signage"
    assert "/healthz" in " ".join(services["signage"]["healthcheck"]["test"])


def test_compose_keeps_state_in_named_volumes(compose: dict[str, Any]) -> None:
    volumes = set(compose["volumes"])
    assert volumes == {"gateway-state", "postgres-data", "mosquitto-data"}
    mounts = {
        name: [str(v).split(":")[0] for v in s.get("volumes", [])]
        for name, s in compose["services"].items()
    }
    assert "gateway-state" in mounts["gateway"]  # the journal spool survives a restart
    assert "postgres-data" in mounts["postgres"]
    assert "mosquitto-data" in mounts["mosquitto"]
    assert (DEPLOY / "mosquitto.conf").is_file()


def test_the_image_is_debian_slim_python_and_runs_unprivileged() -> None:
    lines = [ln.strip() for ln in (DEPLOY / "Containerfile").read_text().splitlines()]
    froms = [ln for ln in lines if ln.startswith("FROM ")]
    assert froms
    assert all("python:" in ln and "slim" in ln for ln in froms), froms
    users = [ln.split()[1] for ln in lines if ln.startswith("USER ")]
    assert users == ["reelgate"]
    assert 'ENTRYPOINT ["reelgate"]' in lines
    run_steps = " ".join(ln for ln in lines if ln.startswith(("RUN", "&&", "/opt")))
    assert "[embedded]" not in run_steps  # production: no embedded broker


def test_the_gateway_unit_reads_the_configuration() -> None:
    service = _unit("reelgate-serve.service")["Service"]
    assert service["User"] == "reelgate"
    assert service["ExecStart"].endswith("reelgate serve --config /etc/reelgate/reelgate.toml")
    checked = "reelgate config check --config /etc/reelgate/reelgate.toml"
    assert service["ExecStartPre"].endswith(checked)  # a bad edit stops the start


def test_the_board_agent_unit_beside_it() -> None:
    unit = _unit("reelgate-board@.service")
    service = unit["Service"]
    assert service["User"] == "reelgate"
    # one instance per EGM; its port, broker and AFT identity in the instance's env file
    assert service["ExecStart"].endswith("reelgate board --board-id %i")
    assert service["EnvironmentFile"] == "/etc/reelgate/board-%i.env"
    assert service["SupplementaryGroups"] == "dialout"
    assert unit["Install"]["WantedBy"] == "multi-user.target"


def test_the_system_user_is_declared() -> None:
    lines = [
        ln.split()
        for ln in (DEPLOY / "sysusers.d" / "reelgate.conf").read_text().splitlines()
        if ln and not ln.startswith("#")
    ]
    assert lines[0][:2] == ["u", "reelgate"]
    assert ["m", "reelgate", "dialout"] in lines
