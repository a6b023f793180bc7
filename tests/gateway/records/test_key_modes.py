"""Issue 25.7: a secret key file open to the group or others is refused when it is
loaded (every command that loads one), in one line naming the file and the fix; the
public key is no secret; key files are written 0600 whatever the umask."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.app.cli import main
from gateway.records import chain
from gateway.records.keys import (
    AUDIT_KEY_ENV,
    SIGNING_KEY_ENV,
    KeyPaths,
    RecordKeyError,
    create_backup_key,
    create_keys,
    load_audit_key,
    load_backup_key,
    load_public_key,
    load_signing_key,
)


@pytest.fixture
def keys(tmp_path: Path) -> KeyPaths:
    paths = KeyPaths.in_directory(tmp_path / "keys")
    create_keys(paths)
    return paths


@pytest.fixture
def wide_umask() -> Iterator[None]:
    old = os.umask(0o000)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("wide_umask")
def test_keys_are_written_0600_whatever_the_umask(tmp_path: Path) -> None:
    paths = KeyPaths.in_directory(tmp_path / "keys")
    create_keys(paths)
    create_backup_key(tmp_path / "backup.key")
    for path in (paths.audit_key, paths.signing_key, tmp_path / "backup.key"):
        assert path.stat().st_mode & 0o777 == 0o600, path


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o644, 0o660])
def test_a_key_open_to_others_is_refused(keys: KeyPaths, tmp_path: Path, mode: int) -> None:
    backup = tmp_path / "backup.key"
    create_backup_key(backup)
    for path, load in (
        (keys.audit_key, load_audit_key),
        (keys.signing_key, load_signing_key),
        (backup, load_backup_key),
    ):
        path.chmod(mode)
        with pytest.raises(RecordKeyError) as caught:
            load(path)
        message = str(caught.value)
        assert message == (
            f"{path}: key file is open to group or others (mode {mode:04o}); "
            f"it must be 0600: chmod 600 {path}"
        )
        path.chmod(0o600)
        load(path)


def test_the_public_key_is_no_secret(keys: KeyPaths) -> None:
    keys.public_key.chmod(0o644)
    load_public_key(keys.public_key)


def test_every_command_that_loads_the_key_refuses_in_one_line(
    keys: KeyPaths,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(AUDIT_KEY_ENV, str(keys.audit_key))
    monkeypatch.setenv(SIGNING_KEY_ENV, str(keys.signing_key))
    db = ["--database", f"sqlite:///{tmp_path / 'venue.db'}"]
    assert main(["db", "upgrade", *db]) == 0
    keys.audit_key.chmod(0o644)
    capsys.readouterr()
    for argv in (["audit", "verify", *db], ["tournament", "list", *db]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1
        assert str(keys.audit_key) in err[0]
        assert "chmod 600" in err[0]
    with pytest.raises(RecordKeyError):
        chain.load(keys)
