"""Username/password and TLS: a board and the driver through a private Mosquitto that
accepts only authenticated clients over TLS (certificates made by the test)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from emulators.machine import EmulatedMachine
from emulators.mqtt_board import MqttBoard
from gateway.machines.driver import LinkDown
from gateway.machines.mqtt import MqttMachineDriver
from protocols.mqtt.client import MqttSession, MqttSettings, MqttUnavailable

from .mosquitto_proc import Mosquitto

pytestmark = pytest.mark.skipif(
    shutil.which("mosquitto") is None or shutil.which("mosquitto_passwd") is None,
    reason="needs the mosquitto and mosquitto_passwd binaries",
)


def _pem_pair(folder: Path) -> Path:
    """A CA and a server certificate for 127.0.0.1; returns the CA file."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "reelgate test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    (folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (folder / "server.pem").write_bytes(server.public_bytes(serialization.Encoding.PEM))
    (folder / "server.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return folder / "ca.pem"


@pytest.fixture
def secure_broker(tmp_path: Path) -> Iterator[tuple[Mosquitto, Path]]:
    ca = _pem_pair(tmp_path)
    passwd = tmp_path / "passwd"
    subprocess.run(
        ["mosquitto_passwd", "-b", "-c", str(passwd), "floor", "s3cret-board"],
        check=True,
        capture_output=True,
    )
    passwd.chmod(0o600)
    broker = Mosquitto(
        tmp_path,
        extra=(
            f"allow_anonymous false\npassword_file {passwd}\ncafile {ca}\n"
            f"certfile {tmp_path / 'server.pem'}\nkeyfile {tmp_path / 'server.key'}\n"
        ),
    )
    broker.start()
    try:
        yield broker, ca
    finally:
        broker.stop()


async def test_board_and_driver_over_tls_with_a_password(
    secure_broker: tuple[Mosquitto, Path],
) -> None:
    broker, ca = secure_broker
    site = f"t{uuid.uuid4().hex[:10]}"
    url = f"mqtts://floor:s3cret-board@127.0.0.1:{broker.port}?ca={ca}"
    board = MqttBoard(EmulatedMachine("T01"), MqttSettings.from_url(url), site)
    await board.start()
    base, _, query = url.partition("?")
    driver = MqttMachineDriver.from_uri("T01", f"{base}/{site}/T01?{query}&mqtt5=1")
    try:
        await driver.open()
        await driver.enter_tournament(200, 30)
        assert board.machine.in_tournament
        assert (await driver.heat_score()).credits == 200
    finally:
        await driver.close()
        await board.stop()


async def test_wrong_password_is_refused_at_once(secure_broker: tuple[Mosquitto, Path]) -> None:
    broker, ca = secure_broker
    uri = f"mqtts://floor:wrong@127.0.0.1:{broker.port}/t{uuid.uuid4().hex[:8]}/T02?ca={ca}"
    driver = MqttMachineDriver.from_uri("T02", uri)
    with pytest.raises(LinkDown, match=r"T02: MQTT broker at 127\.0\.0\.1:\d+ refused us"):
        await driver.open()


async def test_plain_text_to_a_tls_listener_gets_nowhere(
    secure_broker: tuple[Mosquitto, Path],
) -> None:
    broker, _ = secure_broker
    settings = MqttSettings(
        "127.0.0.1", broker.port, username="floor", password="s3cret-board", connect_timeout=1.0
    )
    with pytest.raises(MqttUnavailable, match="no MQTT broker"):
        await MqttSession(settings).start()
