"""Encrypted backups: AES-256-GCM in chunks, under a key file (issue 25.7).

A backup holds every player's name, ID number and date of birth; one that leaves the
host (a USB stick, a network share) is encrypted with the venue's backup key
(:func:`gateway.records.keys.create_backup_key`), kept apart from the backups.

File format (all integers big-endian)::

    magic     8 bytes   b"RGBACKUP"
    version   1 byte    1
    key id    8 bytes   SHA-256(b"reelgate backup key id" + key)[:8]
    salt     16 bytes   random, one per file
    chunks    ...       each: length (4 bytes) + AES-GCM ciphertext with its 16-byte tag

The file's own key is HKDF-SHA256(backup key, salt, info b"reelgate backup v1"), so a
chunk's nonce can be its number (12 bytes) without ever repeating under one key.  Each
chunk holds up to 1 MiB of the plain backup; its associated data is the header, its
number (8 bytes) and a last-chunk flag (1 byte), so chunks cannot be reordered, dropped,
or cut off at the end unnoticed (the last chunk is always written, empty if need be).
The key id only says, in one line, that a file was written under another key.
"""

from __future__ import annotations

import hashlib
import os
import struct
from typing import BinaryIO

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

MAGIC = b"RGBACKUP"
VERSION = 1
CHUNK = 1 << 20
_TAG = 16
_SALT = 16
_HEADER = len(MAGIC) + 1 + 8 + _SALT
_INFO = b"reelgate backup v1"


class BackupCryptError(Exception):
    """A file that does not decrypt: another key, damaged, cut short (one line)."""


def key_id(key: bytes) -> bytes:
    return hashlib.sha256(b"reelgate backup key id" + key).digest()[:8]


def _file_cipher(key: bytes, salt: bytes) -> AESGCM:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=_INFO).derive(key)
    return AESGCM(derived)


def _aad(header: bytes, number: int, last: bool) -> bytes:
    return header + struct.pack(">QB", number, 1 if last else 0)


def _nonce(number: int) -> bytes:
    return number.to_bytes(12, "big")


def has_magic(head: bytes) -> bool:
    return head.startswith(MAGIC)


def _read_full(source: BinaryIO, size: int) -> bytes:
    """Up to ``size`` bytes: short only at the end of the file."""
    parts, left = [], size
    while left:
        part = source.read(left)
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def encrypt(source: BinaryIO, target: BinaryIO, key: bytes) -> None:
    """Write ``source`` encrypted to ``target`` (see the module docstring)."""
    salt = os.urandom(_SALT)
    header = MAGIC + bytes([VERSION]) + key_id(key) + salt
    cipher = _file_cipher(key, salt)
    target.write(header)
    number = 0
    chunk = _read_full(source, CHUNK)
    while True:
        following = _read_full(source, CHUNK) if len(chunk) == CHUNK else b""
        last = not following
        sealed = cipher.encrypt(_nonce(number), chunk, _aad(header, number, last))
        target.write(struct.pack(">I", len(sealed)) + sealed)
        if last:
            return
        chunk, number = following, number + 1


def decrypt(source: BinaryIO, target: BinaryIO, key: bytes) -> None:
    """Write the plain backup of an encrypted ``source`` to ``target``; every chunk is
    authenticated before it is written, and the file must end with its last chunk."""
    header = _read_full(source, _HEADER)
    if len(header) < _HEADER or not has_magic(header):
        raise BackupCryptError("not an encrypted Reelgate backup")
    if header[len(MAGIC)] != VERSION:
        raise BackupCryptError(f"encrypted backup of unknown version {header[len(MAGIC)]}")
    found = header[len(MAGIC) + 1 : len(MAGIC) + 9]
    if found != key_id(key):
        raise BackupCryptError(
            f"encrypted under another backup key (key id {found.hex()}, this key "
            f"{key_id(key).hex()})"
        )
    cipher = _file_cipher(key, header[-_SALT:])
    number = 0
    pending = _next_chunk(source)
    while pending is not None:
        following = _next_chunk(source)
        last = following is None
        try:
            plain = cipher.decrypt(_nonce(number), pending, _aad(header, number, last))
        except InvalidTag:
            where = "cut short or damaged at its end" if last else "damaged"
            raise BackupCryptError(f"{where} (chunk {number} does not authenticate)") from None
        target.write(plain)
        if last:
            return
        pending, number = following, number + 1
    raise BackupCryptError("cut short: no chunk after the header")


def _next_chunk(source: BinaryIO) -> bytes | None:
    size_bytes = _read_full(source, 4)
    if not size_bytes:
        return None
    if len(size_bytes) < 4:
        raise BackupCryptError("cut short inside a chunk's length")
    (size,) = struct.unpack(">I", size_bytes)
    if size < _TAG or size > CHUNK + _TAG:
        raise BackupCryptError(f"damaged: a chunk of {size} bytes")
    body = _read_full(source, size)
    if len(body) < size:
        raise BackupCryptError("cut short inside a chunk")
    return body
