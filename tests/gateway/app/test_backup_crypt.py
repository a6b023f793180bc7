"""Issue 25.7: encrypted backups (gateway.app.backups.crypt).  Round trips at the chunk
boundaries; another key, a flipped byte, chunks reordered, dropped or cut off at the
end are each refused in one line, never decrypted into something else."""

from __future__ import annotations

import io
import os

import pytest

from gateway.app.backups import crypt

KEY = bytes(range(32))
OTHER = bytes(range(1, 33))


def _encrypt(plain: bytes, key: bytes = KEY) -> bytes:
    out = io.BytesIO()
    crypt.encrypt(io.BytesIO(plain), out, key)
    return out.getvalue()


def _decrypt(sealed: bytes, key: bytes = KEY) -> bytes:
    out = io.BytesIO()
    crypt.decrypt(io.BytesIO(sealed), out, key)
    return out.getvalue()


@pytest.mark.parametrize(
    "size", [0, 1, crypt.CHUNK - 1, crypt.CHUNK, crypt.CHUNK + 1, 2 * crypt.CHUNK + 17]
)
def test_round_trip(size: int) -> None:
    plain = os.urandom(size)
    sealed = _encrypt(plain)
    assert sealed.startswith(crypt.MAGIC)
    if size >= 16:  # a shorter random plaintext can turn up in any output by chance
        assert plain[:64] not in sealed
    assert _decrypt(sealed) == plain


def test_each_file_has_its_own_salt() -> None:
    assert _encrypt(b"same ID numbers") != _encrypt(b"same ID numbers")


def test_another_key_is_named() -> None:
    with pytest.raises(crypt.BackupCryptError, match="encrypted under another backup key"):
        _decrypt(_encrypt(b"x" * 100), OTHER)


def test_a_flipped_byte_is_refused() -> None:
    sealed = bytearray(_encrypt(os.urandom(3000)))
    sealed[-100] ^= 1
    with pytest.raises(crypt.BackupCryptError, match="does not authenticate"):
        _decrypt(bytes(sealed))


def _chunks(sealed: bytes) -> tuple[bytes, list[bytes]]:
    header, rest = sealed[:33], sealed[33:]
    chunks = []
    while rest:
        size = int.from_bytes(rest[:4], "big") + 4
        chunks.append(rest[:size])
        rest = rest[size:]
    return header, chunks


def test_chunks_reordered_dropped_or_cut_off_are_refused() -> None:
    header, chunks = _chunks(_encrypt(os.urandom(2 * crypt.CHUNK + 5)))
    assert len(chunks) == 3
    for forged in (
        [chunks[1], chunks[0], chunks[2]],  # reordered
        [chunks[0], chunks[2]],  # one dropped
        chunks[:2],  # cut off at a chunk boundary: the last chunk is missing
    ):
        with pytest.raises(crypt.BackupCryptError):
            _decrypt(header + b"".join(forged))
    with pytest.raises(crypt.BackupCryptError, match="cut short"):
        _decrypt(header + chunks[0][:100])
    with pytest.raises(crypt.BackupCryptError, match="cut short"):
        _decrypt(header)


def test_not_an_encrypted_backup() -> None:
    with pytest.raises(crypt.BackupCryptError, match="not an encrypted Reelgate backup"):
        _decrypt(b"SQLite format 3\x00" + b"\x00" * 100)
