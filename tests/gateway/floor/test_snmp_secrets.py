"""SNMP secrets stay out of the database.

The database keeps a board's SNMP endpoint and its v3 user (or that v2c is used); the
v3 passphrases and v2c communities come with the run: the secrets file
(``--snmp-secrets`` / ``REELGATE_SNMP_SECRETS``) and the floor file's inline ones.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

import storage.models  # noqa: F401  (every table on Base.metadata)
from gateway.app.commands import bank as bank_command
from gateway.app.commands import serve as serve_command
from gateway.errors import OperatorError
from gateway.floor.model import MachineSpec, load_floor_file, parse_floor, resolve_snmp
from gateway.floor.snmp import (
    SECRETS_ENV,
    SnmpRef,
    SnmpSecrets,
    load_snmp_secrets,
    parse_snmp,
    parse_snmp_secrets,
)
from gateway.floor.store import add_machine, sync_floor
from protocols.snmp.security import V2cCommunity, V3User
from storage import migrate
from storage.db import Base, make_sessionmaker
from storage.testing import EmptyDatabase

from ...storage.conftest import empty_db  # noqa: F401  (fixture)

AUTH, PRIV, COMMUNITY = "auth-secret-7", "priv-secret-7", "community-secret-7"

FLOOR = f"""
[[bank]]
name = "A"
machines = [
  {{ id = "A01", endpoint = "sas+tcp://127.0.0.1:7001", snmp = "udp://127.0.0.1:1161", \
snmp_user = "ops", snmp_auth = "{AUTH}", snmp_priv = "{PRIV}" }},
  {{ id = "A02", endpoint = "sas+tcp://127.0.0.1:7002", snmp = "udp://127.0.0.1:1162", \
community = "{COMMUNITY}" }},
  {{ id = "A03", endpoint = "sas+tcp://127.0.0.1:7003" }},
]
"""

SECRETS = f"""
[v3_users.ops]
auth = "{AUTH}"
priv = "{PRIV}"

[community.machines]
A02 = "{COMMUNITY}"

[community.endpoints]
"udp://127.0.0.1:1163" = "by-endpoint"
"""

BARE_FLOOR = """
[[bank]]
name = "A"
machines = [
  { id = "A01", endpoint = "sas+tcp://127.0.0.1:7001", snmp = "udp://127.0.0.1:1161", \
snmp_user = "ops" },
  { id = "A02", endpoint = "sas+tcp://127.0.0.1:7002", snmp = "udp://127.0.0.1:1162?version=2c" },
  { id = "A04", endpoint = "sas+tcp://127.0.0.1:7004", snmp = "udp://127.0.0.1:1163?version=2c" },
]
"""


def test_the_secrets_file_gives_each_machine_its_security() -> None:
    floor = parse_floor(BARE_FLOOR)
    assert floor.secrets == SnmpSecrets()  # nothing inline
    endpoints = resolve_snmp(floor.bank("A").machines, parse_snmp_secrets(SECRETS))
    assert endpoints["A01"].security == V3User("ops", AUTH, PRIV)  # per v3 user
    assert endpoints["A02"].security == V2cCommunity(COMMUNITY)  # per machine
    assert endpoints["A04"].security == V2cCommunity("by-endpoint")  # per endpoint
    assert (endpoints["A04"].host, endpoints["A04"].port) == ("127.0.0.1", 1163)


def test_parse_snmp_wants_every_credential() -> None:
    full = parse_snmp(f"udp://127.0.0.1:1161?user=ops&auth={AUTH}&priv={PRIV}")
    assert full.security == V3User("ops", AUTH, PRIV)
    with pytest.raises(ValueError, match="passphrases or community are missing"):
        parse_snmp("udp://127.0.0.1:1161?user=ops")


def test_a_machines_own_community_wins_over_its_endpoints() -> None:
    ref = SnmpRef("127.0.0.1", 1163, None)
    secrets = SnmpSecrets(machines={"A04": "own-one"}, endpoints={ref.address: "shared"})
    assert secrets.endpoint("A04", ref).security == V2cCommunity("own-one")
    assert secrets.endpoint("A05", ref).security == V2cCommunity("shared")


@pytest.mark.parametrize(
    ("machine", "key"),
    [
        (MachineSpec("A01", "sas+tcp://h:1", "A", 1, snmp="udp://127.0.0.1:1161?user=ops"),
         "v3_users.ops.auth"),
        (MachineSpec("A02", "sas+tcp://h:1", "A", 2, snmp="udp://127.0.0.1:1162?version=2c"),
         "community.machines.A02"),
    ],
)  # fmt: skip
def test_a_missing_secret_is_one_line_naming_machine_and_key(
    machine: MachineSpec, key: str
) -> None:
    with pytest.raises(OperatorError) as caught:
        resolve_snmp([machine], SnmpSecrets())
    message = str(caught.value)
    assert "\n" not in message
    assert machine.id in message
    assert key in message


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("v3_users = 1", "v3_users must be a table"),
        ('[v3_users.ops]\nauth = "aaaaaaaa"', "v3_users.ops.priv: must be a string"),
        ('[v3_users.ops]\nauth = "short-1"\npriv = "short-2"', "at least 8"),
        ('[v3_users.ops]\nauth = "aaaaaaaa"\npriv = "pppppppp"\nhash = "x"', "'hash'"),
        ('[community.machines]\nA01 = ""', "community.machines.A01"),
        ('[community.endpoints]\n"tcp://h:1" = "c"', "udp://host:port"),
        ('[community.racks]\nA01 = "c"', "community.racks"),
        ("[users]", "unknown key 'users'"),
        ("v3_users = [", "not valid TOML"),
    ],
)
def test_bad_secrets_files_name_the_key_never_the_secret(text: str, names: str) -> None:
    with pytest.raises(OperatorError) as caught:
        parse_snmp_secrets(text, source="s.toml")
    assert names in str(caught.value)
    assert "short-1" not in str(caught.value)
    assert "short-2" not in str(caught.value)


def test_secrets_from_path_or_environment_and_the_floor_files_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets_file = tmp_path / "snmp-secrets.toml"
    secrets_file.write_text(SECRETS.replace(AUTH, "file-auth-1"))
    floor_file = tmp_path / "floor.toml"
    floor_file.write_text(FLOOR)
    monkeypatch.delenv(SECRETS_ENV, raising=False)
    assert load_snmp_secrets(None) == SnmpSecrets()
    from_path = load_snmp_secrets(str(secrets_file))
    assert from_path.users["ops"] == ("file-auth-1", PRIV)
    monkeypatch.setenv(SECRETS_ENV, str(secrets_file))
    assert load_snmp_secrets(None) == from_path
    merged = load_snmp_secrets(None, inline=load_floor_file(floor_file).secrets)
    assert merged.users["ops"] == (AUTH, PRIV)  # inline, for this run
    assert merged.endpoints == {"udp://127.0.0.1:1163": "by-endpoint"}
    with pytest.raises(OperatorError, match=r"--snmp-secrets .*missing\.toml: cannot read"):
        load_snmp_secrets(str(tmp_path / "missing.toml"))


def test_one_v3_user_with_two_passphrases_inline_is_refused() -> None:
    text = FLOOR.replace(
        '{ id = "A03", endpoint = "sas+tcp://127.0.0.1:7003" }',
        '{ id = "A03", endpoint = "sas+tcp://127.0.0.1:7003", snmp = "udp://127.0.0.1:1164",'
        ' snmp_user = "ops", snmp_auth = "other-auth", snmp_priv = "other-priv" }',
    )
    with pytest.raises(OperatorError, match=r"A03.*'ops' given other passphrases"):
        parse_floor(text)


def _args(command: str, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    serve_command.register(sub)
    bank_command.register(sub)
    return parser.parse_args([*command.split(), *extra])


def test_serve_and_bank_check_refuse_to_start_without_a_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SECRETS_ENV, raising=False)
    floor_file = tmp_path / "floor.toml"
    floor_file.write_text(BARE_FLOOR)
    machines = parse_floor(BARE_FLOOR).bank("A").machines
    for command in ("serve --floor", "bank check A --floor", "bank enable A --floor"):
        args = _args(command, str(floor_file))
        assert args.snmp_secrets is None
        with pytest.raises(OperatorError, match=r"machine A01: .*v3_users\.ops\.auth"):
            serve_command.snmp_secrets(args, machines)
    secrets_file = tmp_path / "s.toml"
    secrets_file.write_text(SECRETS)
    args = _args("bank check A --floor", str(floor_file), "--snmp-secrets", str(secrets_file))
    assert serve_command.snmp_secrets(args, machines) == parse_snmp_secrets(SECRETS)


async def _every_text(engine: AsyncEngine) -> str:
    """Every value of every row of every table, as one text."""
    out: list[str] = []
    async with engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            for row in (await conn.execute(sa.select(table))).all():
                out.extend(str(v) for v in row)
    return "\n".join(out)


async def test_no_passphrase_or_community_reaches_the_database(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    floor = await sync_floor(sessions, parse_floor(FLOOR))  # inline secrets
    assert floor.machine("A01").snmp == "udp://127.0.0.1:1161?user=ops"
    assert floor.machine("A02").snmp == "udp://127.0.0.1:1162?version=2c"
    await add_machine(sessions, "A", "A05", "sas+tcp://127.0.0.1:7005",
                      snmp="udp://127.0.0.1:1165?user=ops")  # fmt: skip
    # Secrets on the command line are refused, and nothing is stored.
    for uri in (f"udp://127.0.0.1:1166?community={COMMUNITY}",
                f"udp://127.0.0.1:1166?user=ops&auth={AUTH}&priv={PRIV}"):  # fmt: skip
        with pytest.raises(OperatorError, match="--snmp: no passphrase or community"):
            await add_machine(sessions, "A", "A06", "sas+tcp://127.0.0.1:7006", snmp=uri)
    stored = await _every_text(engine)
    assert "udp://127.0.0.1:1165?user=ops" in stored  # the rows and the audit are there
    assert "A06" not in stored
    for secret in (AUTH, PRIV, COMMUNITY):
        assert secret not in stored
    # The run still has them (from the floor file), so the boards can be reached.
    endpoints = resolve_snmp(floor.bank("A").machines, parse_floor(FLOOR).secrets)
    assert endpoints["A01"].security == V3User("ops", AUTH, PRIV)
    assert endpoints["A02"].security == V2cCommunity(COMMUNITY)


async def test_upgrade_strips_stored_secrets(empty_db: EmptyDatabase) -> None:  # noqa: F811
    engine = empty_db.engine
    await migrate.upgrade_async(engine, "0004")
    old = {
        "V3": f"udp://127.0.0.1:1161?user=ops&auth={AUTH}&priv={PRIV}",
        "V2": f"udp://127.0.0.1:1162?community={COMMUNITY}",
        "V6": f"udp://[::1]:1163?community={COMMUNITY}",
    }
    machine = sa.table(
        "floor_machine",
        sa.column("machine_id"), sa.column("bank_name"), sa.column("position"),
        sa.column("endpoint"), sa.column("snmp_endpoint"), sa.column("updated_at"),
    )  # fmt: skip
    async with engine.begin() as conn:
        await conn.execute(sa.table("floor_bank", sa.column("name"), sa.column("enabled"))
                           .insert().values(name="A", enabled=False))  # fmt: skip
        for position, machine_id in enumerate([*old, "NO"], start=1):
            await conn.execute(
                machine.insert().values(
                    machine_id=machine_id, bank_name="A", position=position,
                    endpoint=f"sas+tcp://127.0.0.1:{7000 + position}",
                    snmp_endpoint=old.get(machine_id),
                    updated_at=sa.func.current_timestamp(),
                )
            )  # fmt: skip
    await migrate.upgrade_async(engine)
    async with engine.connect() as conn:
        rows = dict(
            (await conn.execute(sa.select(machine.c.machine_id, machine.c.snmp_endpoint))).all()
        )
    assert rows == {
        "V3": "udp://127.0.0.1:1161?user=ops",
        "V2": "udp://127.0.0.1:1162?version=2c",
        "V6": "udp://[::1]:1163?version=2c",
        "NO": None,
    }
    for machine_id, text in rows.items():
        if text is not None:  # the stripped form is what the gateway reads back
            spec = MachineSpec(machine_id, "sas+tcp://h:1", "A", 1, snmp=text)
            assert spec.snmp_ref() is not None
