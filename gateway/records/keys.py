"""The venue's two record keys, both kept outside the database.

* The **audit key** (32 random bytes) keys the HMAC-SHA256 chain over the audit log: anyone
  who can write the database but lacks the key cannot re-sign an edited row.
* The **signing key** (Ed25519) signs checkpoints and exports; its public half is what a
  regulator needs to verify a file offline.

Where they live is named in the configuration (or ``REELGATE_AUDIT_KEY_FILE`` /
``REELGATE_SIGNING_KEY_FILE``); :func:`create_keys` writes both files with mode 0600 and
refuses to overwrite an existing key (losing the audit key makes the chain unverifiable).
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

AUDIT_KEY_BYTES = 32
AUDIT_KEY_ENV = "REELGATE_AUDIT_KEY_FILE"
SIGNING_KEY_ENV = "REELGATE_SIGNING_KEY_FILE"


class RecordKeyError(Exception):
    """A key file is missing, unreadable or malformed (one line, names the file)."""


@dataclass(frozen=True)
class KeyPaths:
    audit_key: Path
    signing_key: Path

    @property
    def public_key(self) -> Path:
        return self.signing_key.with_suffix(".pub")

    @classmethod
    def in_directory(cls, directory: Path) -> KeyPaths:
        return cls(directory / "audit.key", directory / "signing.key")


def create_keys(paths: KeyPaths) -> None:
    """Write a fresh audit key, signing key and public key; never overwrite one."""
    for path in (paths.audit_key, paths.signing_key, paths.public_key):
        if path.exists():
            raise RecordKeyError(f"{path}: already exists; a record key is never overwritten")
    private = Ed25519PrivateKey.generate()
    _write_secret(paths.audit_key, secrets.token_bytes(AUDIT_KEY_BYTES).hex().encode() + b"\n")
    _write_secret(
        paths.signing_key,
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )
    paths.public_key.parent.mkdir(parents=True, exist_ok=True)
    paths.public_key.write_bytes(public_pem(private.public_key()))


def load_audit_key(path: Path) -> bytes:
    """The HMAC key: 64 hex digits on one line."""
    text = _read(path).decode("ascii", errors="replace").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise RecordKeyError(f"{path}: not an audit key (expected 64 hex digits)") from None
    if len(key) != AUDIT_KEY_BYTES:
        raise RecordKeyError(f"{path}: not an audit key (expected 64 hex digits)")
    return key


def load_signing_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(_read(path), password=None)
    except ValueError:
        raise RecordKeyError(f"{path}: not a PEM Ed25519 private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise RecordKeyError(f"{path}: not an Ed25519 private key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(_read(path))
    except ValueError:
        raise RecordKeyError(f"{path}: not a PEM Ed25519 public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise RecordKeyError(f"{path}: not an Ed25519 public key")
    return key


def public_pem(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise RecordKeyError(f"{path}: cannot read key ({exc.strerror})") from None


def _write_secret(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
