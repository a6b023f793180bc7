"""The venue's two record keys, both kept outside the database.

* The **audit key** (32 random bytes) keys the HMAC-SHA256 chain over the audit log: anyone
  who can write the database but lacks the key cannot re-sign an edited row.
* The **signing key** (Ed25519) signs checkpoints and exports; its public half is what a
  regulator needs to verify a file offline.

Where they live is named in the configuration (or ``REELGATE_AUDIT_KEY_FILE`` /
``REELGATE_SIGNING_KEY_FILE``); :func:`create_keys` writes both files with mode 0600 and
refuses to overwrite an existing key (losing the audit key makes the chain unverifiable).

A secret key file (audit, signing, backup) is refused when its mode gives the group or
others any access (:func:`check_private`): a key anyone on the host can read protects
nothing, and one they can write can be swapped.  Every command that loads a key checks
it, in one line naming the file and the ``chmod`` that fixes it.  The public key is not
a secret and is not checked.

The **backup key** (32 random bytes, 64 hex digits like the audit key) encrypts backups
(:mod:`gateway.app.backups.crypt`); :func:`create_backup_key` writes one with mode 0600.
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
BACKUP_KEY_ENV = "REELGATE_BACKUP_KEY_FILE"
BACKUP_KEY_BYTES = 32


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
    return _hex_key(path, "an audit key", AUDIT_KEY_BYTES)


def load_backup_key(path: Path) -> bytes:
    """The backup encryption key: 64 hex digits on one line."""
    return _hex_key(path, "a backup key", BACKUP_KEY_BYTES)


def create_backup_key(path: Path) -> None:
    """Write a fresh backup key (mode 0600); never overwrite one (the backups it
    encrypted would be lost with it)."""
    if path.exists():
        raise RecordKeyError(f"{path}: already exists; a key is never overwritten")
    _write_secret(path, secrets.token_bytes(BACKUP_KEY_BYTES).hex().encode() + b"\n")


def _hex_key(path: Path, what: str, size: int) -> bytes:
    text = _read(path).decode("ascii", errors="replace").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise RecordKeyError(f"{path}: not {what} (expected {2 * size} hex digits)") from None
    if len(key) != size:
        raise RecordKeyError(f"{path}: not {what} (expected {2 * size} hex digits)")
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
        key = serialization.load_pem_public_key(_read(path, secret=False))
    except ValueError:
        raise RecordKeyError(f"{path}: not a PEM Ed25519 public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise RecordKeyError(f"{path}: not an Ed25519 public key")
    return key


def public_pem(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def check_private(path: Path, mode: int) -> None:
    """Refuse a secret key file the group or others may read, write or run."""
    if os.name == "posix" and mode & 0o077:
        raise RecordKeyError(
            f"{path}: key file is open to group or others (mode {mode & 0o777:04o}); "
            f"it must be 0600: chmod 600 {path}"
        )


def _read(path: Path, *, secret: bool = True) -> bytes:
    try:
        with path.open("rb") as handle:
            if secret:  # the mode of the file read, not of a path swapped meanwhile
                check_private(path, os.fstat(handle.fileno()).st_mode)
            return handle.read()
    except OSError as exc:
        raise RecordKeyError(f"{path}: cannot read key ({exc.strerror})") from None


def _write_secret(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.fchmod(fd, 0o600)  # whatever the umask
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
