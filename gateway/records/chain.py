"""Where the audit chain's keys come from, and binding them to an engine.

Resolution, first match wins (the same for every command, the API and ``serve``):

1. ``REELGATE_AUDIT_KEY_FILE`` (and ``REELGATE_SIGNING_KEY_FILE``, else ``signing.key``
   beside the audit key) — production: keys on a path the database server never sees;
2. for a SQLite file, the folder ``<file>.keys/`` beside it — the zero-set-up default
   ``reelgate db upgrade`` (and so the demo) creates for a new SQLite file.  Such keys
   protect against someone editing the file, not against someone who can read the
   folder; a venue names key files of its own.

With neither, the engine has no key: reads work, and every write that would add an
audit row is refused with one line (:class:`storage.chain_errors.AuditKeyMissing`).
Storage never sees a path: it receives :class:`storage.audit.ChainKeys` (the MAC key,
the checkpoint signer and the public key's fingerprint) through :func:`bind`.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.records.keys import (
    AUDIT_KEY_ENV,
    SIGNING_KEY_ENV,
    KeyPaths,
    RecordKeyError,
    create_keys,
    load_audit_key,
    load_public_key,
    load_signing_key,
)
from storage.audit import ChainKeys, bind_keys

__all__ = [
    "RecordKeyError",
    "SignatureChecker",
    "bind",
    "create_keys",
    "key_paths",
    "load",
    "signing_key_file",
]


def fingerprint(public: Ed25519PublicKey) -> str:
    """SHA-256 of the raw 32-byte public key, hex: names the key in every checkpoint."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def sqlite_key_dir(url: str) -> Path | None:
    """``<file>.keys`` beside a SQLite file database; None for anything else."""
    parsed = make_url(url)
    file = parsed.database or ""
    if not parsed.get_backend_name().startswith("sqlite") or not file or file == ":memory:":
        return None
    if file.startswith("file:"):
        return None
    path = Path(file).expanduser()
    return path.with_name(path.name + ".keys")


def key_paths(url: str) -> KeyPaths | None:
    """The key files this database uses (see the module docstring), or None."""
    audit_file = os.environ.get(AUDIT_KEY_ENV)
    if audit_file:
        signing = os.environ.get(SIGNING_KEY_ENV) or str(Path(audit_file).with_name("signing.key"))
        return KeyPaths(Path(audit_file), Path(signing))
    folder = sqlite_key_dir(url)
    if folder is not None and (folder / "audit.key").exists():
        return KeyPaths.in_directory(folder)
    return None


def signing_key_file(url: str) -> Path | None:
    """The key that signs exports of this database: ``REELGATE_SIGNING_KEY_FILE``, else
    the signing key of its key folder (the one that signs its checkpoints); None when
    neither names an existing file.  ``reelgate export`` and the console ask the same."""
    named = os.environ.get(SIGNING_KEY_ENV)
    if named:
        return Path(named)
    paths = key_paths(url)
    if paths is None or not paths.signing_key.exists():
        return None
    return paths.signing_key


def load(paths: KeyPaths) -> ChainKeys:
    """The chain keys from their files; the signing key is optional (no checkpoints)."""
    mac_key = load_audit_key(paths.audit_key)
    if not paths.signing_key.exists():
        return ChainKeys(mac_key)
    private = load_signing_key(paths.signing_key)
    return ChainKeys(mac_key, private.sign, fingerprint(private.public_key()))


def bind(engine: AsyncEngine, url: str) -> ChainKeys | None:
    paths = key_paths(url)
    keys = load(paths) if paths is not None else None
    bind_keys(engine, keys)
    return keys


def ensure_local_keys(url: str) -> Path | None:
    """Create ``<file>.keys`` for a SQLite file with no key configured; the folder made."""
    if os.environ.get(AUDIT_KEY_ENV):
        return None
    folder = sqlite_key_dir(url)
    if folder is None or (folder / "audit.key").exists():
        return None
    create_keys(KeyPaths.in_directory(folder))
    return folder


def throwaway_keys() -> KeyPaths | None:
    """Keys for a benchmark run when none is configured: made in a temporary folder
    (removed at exit) and named in the environment, so this process, the engines it
    binds (:func:`bind`) and its subprocesses all find them.  None if a key is set."""
    if os.environ.get(AUDIT_KEY_ENV):
        return None
    folder = Path(tempfile.mkdtemp(prefix="reelgate-keys-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    paths = KeyPaths.in_directory(folder)
    create_keys(paths)
    os.environ[AUDIT_KEY_ENV] = str(paths.audit_key)
    os.environ[SIGNING_KEY_ENV] = str(paths.signing_key)
    return paths


class SignatureChecker:
    """Checks checkpoint signatures with one public key (and its fingerprint)."""

    def __init__(self, public_key_file: Path) -> None:
        self.key = load_public_key(public_key_file)
        self.fingerprint = fingerprint(self.key)

    def __call__(self, payload: bytes, signature: bytes, key_fingerprint: str) -> bool:
        if key_fingerprint != self.fingerprint:
            return False
        try:
            self.key.verify(signature, payload)
        except InvalidSignature:
            return False
        return True
