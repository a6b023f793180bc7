"""HTTPS from a certificate and key in the configuration (issue 11): ``reelgate api`` serves
the API over TLS on loopback with a self-signed certificate made here, the session
cookie is Secure, plain HTTP is not answered, and a bad key file is one line."""

from __future__ import annotations

import argparse
import ipaddress
import ssl
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from argon2 import PasswordHasher
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

import storage.accounts
from gateway.accounts import service
from gateway.app import configfile
from gateway.app.cli import main
from gateway.app.commands import api as api_command
from gateway.app.database import open_engine
from gateway.errors import OperatorError
from gateway.tournament.services import unit_of_work
from storage.db import make_sessionmaker

PASSWORD = "correct horse battery"


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(
        storage.accounts, "HASHER", PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    )
    monkeypatch.delenv("REELGATE_DATABASE_URL", raising=False)  # the file's SQLite, here
    monkeypatch.setattr(configfile, "DEFAULT_FILE", tmp_path / "absent.toml")


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "reelgate test")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "gateway.pem", folder / "gateway.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@pytest.fixture
def configured(tmp_path: Path) -> tuple[Path, Path, str]:
    cert, key = _self_signed(tmp_path)
    db = f"sqlite:///{tmp_path / 'desk.db'}"
    assert main(["db", "upgrade", "--database", db]) == 0
    config = tmp_path / "reelgate.toml"
    config.write_text(
        f'[database]\nurl = "{db}"\n'
        f'[http]\nlisten = "127.0.0.1:0"\ntls_cert = "{cert}"\ntls_key = "{key}"\n'
    )
    return config, cert, db


def _args(config: Path) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    api_command.register(parser.add_subparsers())
    args = parser.parse_args(["api", "--config", str(config)])
    api_command.configured_http(args)
    return args


async def test_https_from_the_configuration_with_a_secure_cookie(
    configured: tuple[Path, Path, str],
) -> None:
    config, cert, db = configured
    _, engine = await open_engine(db)
    try:
        async with unit_of_work(make_sessionmaker(engine)) as s:
            await service.add_user(
                s, "thandi", "cashier", PASSWORD, actor="setup", now=datetime.now(UTC)
            )
    finally:
        await engine.dispose()
    server = await api_command.start_http(_args(config))
    assert server is not None
    try:
        assert server.url.startswith("https://127.0.0.1:")
        trust = ssl.create_default_context(cafile=str(cert))
        root = server.url.removesuffix("/api/v1")
        async with httpx.AsyncClient(base_url=root, verify=trust, timeout=10) as client:
            r = await client.post("/api/v1/login", json={"name": "thandi", "password": PASSWORD})
            assert r.status_code == 200, r.text
            cookie = r.headers["set-cookie"].lower()
            assert "secure" in cookie
            assert "httponly" in cookie
            assert (await client.get("/api/v1/me")).json()["name"] == "thandi"
        plain = root.replace("https://", "http://")
        async with httpx.AsyncClient(base_url=plain, timeout=5) as client:
            with pytest.raises(httpx.HTTPError):
                await client.get("/api/v1/me")  # TLS only: no plain-text answer
    finally:
        await server.close()


def test_a_bad_key_file_is_one_line(
    configured: tuple[Path, Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config, _cert, _db = configured
    bad = tmp_path / "bad.key"
    bad.write_text("not a key\n")
    config.write_text(config.read_text().replace(str(tmp_path / "gateway.key"), str(bad)))
    capsys.readouterr()
    assert main(["api", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "cannot load" in err
    assert str(bad) in err


def test_a_cert_without_its_key_is_one_line_naming_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "half.toml"
    config.write_text('[http]\nlisten = "127.0.0.1:0"\ntls_cert = "c.pem"\n')
    capsys.readouterr()
    assert main(["api", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"reelgate: error: {config}: http: tls_cert and tls_key go together")


# Issue 25.7: no plain HTTP off loopback unless said in so many words.


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True), ("127.8.9.1", True), ("::1", True), ("localhost", True),
        ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("desk.venue", False),
    ],
)  # fmt: skip
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert api_command.is_loopback(host) is loopback


@pytest.mark.parametrize("command", ["api", "serve"])
def test_plain_http_off_loopback_is_refused_in_one_line(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'desk.db'}"
    extra = ["--floor", str(tmp_path / "floor.toml")] if command == "serve" else []
    capsys.readouterr()
    code = main([command, "--database", db, "--http", "0.0.0.0:8443", *extra])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "plain HTTP off loopback" in err
    assert "--insecure-http" in err
    assert not (tmp_path / "desk.db").exists()  # refused before anything was opened


def test_insecure_http_said_in_so_many_words(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    api_command.register(parser.add_subparsers())
    args = parser.parse_args(["api", "--http", "192.0.2.10:8443", "--insecure-http"])
    api_command.configured_http(args)
    api_command.check_transport(args, tls=False)  # allowed: said on the command line
    config = tmp_path / "reelgate.toml"
    config.write_text('[http]\nlisten = "192.0.2.10:8443"\ninsecure_http = true\n')
    args = parser.parse_args(["api", "--config", str(config)])
    api_command.configured_http(args)
    api_command.check_transport(args, tls=False)  # allowed: said in the configuration
    config.write_text('[http]\nlisten = "192.0.2.10:8443"\n')
    args = parser.parse_args(["api", "--config", str(config)])
    api_command.configured_http(args)
    with pytest.raises(OperatorError, match="plain HTTP off loopback"):
        api_command.check_transport(args, tls=False)
    api_command.check_transport(args, tls=True)  # HTTPS: anywhere
