"""Alembic: an empty database upgraded to head is exactly ``Base.metadata``, both ways;
so is a database upgraded from every earlier revision, and data survives the trip."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

import storage.models  # noqa: F401  (every table on Base.metadata)
from gateway.tournament.services.live_standings import qualifier_cut
from storage import audit, audit_verify, migrate
from storage.db import Base, make_sessionmaker
from storage.testing import T0, Builder, EmptyDatabase, unique_id_number
from storage.tournament import Player, Tournament
from storage.types import UTCDateTime

# Every revision but head, oldest first: a database may sit at any of them.
EARLIER = [
    r.revision
    for r in reversed(list(ScriptDirectory.from_config(migrate.alembic_config()).walk_revisions()))
][:-1]

STALE = (
    "models differ from the migrations: add a revision with "
    '`python -m storage.migrate revision -m "what changed"` and read it before committing'
)


async def _tables(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as conn:
        return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))


async def test_upgrade_to_head_matches_models(empty_db: EmptyDatabase) -> None:
    engine = empty_db.engine
    await migrate.upgrade_async(engine)
    assert await migrate.current_revision(engine) == migrate.head_revision()
    diffs = await migrate.schema_differences(engine)
    assert diffs == [], STALE
    assert await _tables(engine) == set(Base.metadata.tables) | {"alembic_version"}


async def test_downgrade_to_base_and_back(empty_db: EmptyDatabase) -> None:
    engine = empty_db.engine
    await migrate.upgrade_async(engine)
    await migrate.downgrade_async(engine, "base")
    assert await _tables(engine) == {"alembic_version"}
    assert await migrate.current_revision(engine) is None
    await migrate.upgrade_async(engine)
    assert await migrate.schema_differences(engine) == [], STALE


async def test_upgrade_is_idempotent_and_the_schema_works(empty_db: EmptyDatabase) -> None:
    engine = empty_db.engine
    await migrate.upgrade_async(engine)
    await migrate.upgrade_async(engine)  # already at head: nothing to do
    async with make_sessionmaker(engine).begin() as session:
        b = Builder(session)
        await b.make_tournament(semi_final_size=2)
        for credits in (900, 800, 700):
            await b.played(await b.player(), credits)
        result = await qualifier_cut(session, b.t.id)
    assert [[r.credits for r in g] for g in result.groups] == [[900], [800, 700]]


def test_sync_upgrade_by_url(tmp_path: Path) -> None:
    """The embedded SQLite default is created this way by CLI commands."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'embedded.db'}"
    migrate.upgrade(url)
    assert migrate.main(["check", "--database", url]) == 0, STALE
    assert migrate.main(["current", "--database", url]) == 0


@pytest.mark.parametrize("start", EARLIER)
async def test_upgrade_from_every_earlier_revision(empty_db: EmptyDatabase, start: str) -> None:
    engine = empty_db.engine
    await migrate.upgrade_async(engine, start)
    assert await migrate.current_revision(engine) == start
    await migrate.upgrade_async(engine)
    assert await migrate.current_revision(engine) == migrate.head_revision()
    assert await migrate.schema_differences(engine) == [], STALE


async def test_0002_moves_settings_out_of_the_audit_log(empty_db: EmptyDatabase) -> None:
    """Revision 0001 kept packages, prize places, the T20 period and the T10 notice
    only in the audit log; 0002 copies them into tables and leaves the chain intact."""
    engine = empty_db.engine
    await migrate.upgrade_async(engine, "0001")
    old_settings = {
        "packages": [
            {"code": "single", "price_cents": 5000, "seats": 1, "casino_credit_cents": 0},
            {"code": "R300", "price_cents": 30000, "seats": 6, "casino_credit_cents": 2500},
        ],
        "prize_places": 3,
        "postpone_after_s": 1800,
        "reschedule_notice_s": 3600,
    }
    async with make_sessionmaker(engine).begin() as session:
        # Core inserts, as 0001's code wrote them: no seal (the chain of 0001 has no key,
        # and its head no column the seals' writer needs).
        for name in ("Changed", "Never configured"):
            await session.execute(sa.insert(Tournament).values(name=name))
        await session.execute(
            sa.insert(Player).values(
                id_number=unique_id_number(), name="P", date_of_birth=T0.date()
            )
        )
        changed_id, plain_id = (
            await session.scalars(sa.select(Tournament.id).order_by(Tournament.name))
        ).all()
        player_id = await session.scalar(sa.select(Player.id))
        subject = f"tournament:{changed_id}"
        await _legacy_row(
            session, actor="d", action="tournament.create", subject=subject,
            details={"settings": old_settings},
        )  # fmt: skip
        newer = {**old_settings, "prize_places": 5, "postpone_after_s": 2700}
        await _legacy_row(
            session, actor="d", action="tournament.settings", subject=subject,
            reason="rule 23", details={"settings": newer},
        )  # fmt: skip
        # A purchase as 0001 wrote it: the package code only in the audit row.
        await session.execute(
            sa.text(
                "INSERT INTO entry_purchases (tournament_id, player_id, kind, seats,"
                " amount_cents, package_credit_cents, purchased_at, valid_until, cashier)"
                " VALUES (:t, :p, 'package', 6, 30000, 2500, :at, :until, 'c')"
            ),
            {"t": changed_id, "p": player_id, "at": T0, "until": T0 + timedelta(hours=48)},
        )
        purchase_id = (
            await session.execute(sa.text("SELECT max(id) FROM entry_purchases"))
        ).scalar()
        await _legacy_row(
            session, actor="c", action="purchase.sell", subject=f"player:{player_id}",
            details={"purchase_id": purchase_id, "package": "R300"},
        )  # fmt: skip
        ids = (changed_id, plain_id)

    await migrate.upgrade_async(engine)
    assert await migrate.schema_differences(engine) == [], STALE
    async with make_sessionmaker(engine)() as session:
        rows = await session.execute(
            sa.text(
                "SELECT tournament_id, prize_places, postpone_after_seconds,"
                " reschedule_notice_seconds FROM tournament_settings"
            )
        )
        settings = {r[0]: tuple(r[1:]) for r in rows.all()}
        packages = (
            await session.execute(
                sa.text(
                    "SELECT tournament_id, position, code, price_cents, seats, casino_credit_cents"
                    " FROM tournament_packages ORDER BY tournament_id, position"
                )
            )
        ).all()
        code = (
            await session.execute(
                sa.text("SELECT package_code FROM entry_purchases WHERE id = :i"),
                {"i": purchase_id},
            )
        ).scalar()
        chain = await audit_verify.verify(session)
    assert settings == {ids[0]: (5, 2700, 3600), ids[1]: (3, 1800, 3600)}  # newest row wins
    assert [tuple(r) for r in packages] == [
        (ids[0], 1, "single", 5000, 1, 0),
        (ids[0], 2, "R300", 30000, 6, 2500),
        (ids[1], 1, "single", 5000, 1, 0),  # 0001's defaults for a tournament never set
        (ids[1], 2, "R200", 20000, 4, 0),
    ]
    assert code == "R300"
    # The legacy chain is intact but not yet under the key: not trusted until keyed.
    unsealed = "row(s) not under the seals yet: run `reelgate db upgrade` with the audit key"
    assert [f.line() for f in chain.findings] == [
        "audit_log 3: the chain was never keyed: no row is under the audit key",
        f"entry_purchases {purchase_id}: inserted without an audit row",
        f"players *: 1 {unsealed}",
        f"tournament_packages *: 4 {unsealed}",
        f"tournament_settings *: 2 {unsealed}",
        f"tournaments *: 2 {unsealed}",
    ]
    async with make_sessionmaker(engine).begin() as session:
        assert await session.run_sync(audit.key_legacy_chain) == 3
    async with make_sessionmaker(engine)() as session:
        keyed = await audit_verify.verify(session)
        genesis = await session.get(audit.AuditEntry, 4)
    assert keyed.ok, [f.line() for f in keyed.findings]
    assert keyed.keyed_from == 4
    assert genesis is not None
    assert genesis.details_dict()["legacy_rows"] == 3
    # the purchase, the player, 2 tournaments, their 2 settings and 4 packages, sealed as
    # they stood when keyed
    assert keyed.sealed_rows == 10
    async with engine.begin() as conn:  # a legacy row edited after keying is still named
        await conn.execute(sa.text("UPDATE audit_log SET actor = 'x' WHERE id = 2"))
    async with make_sessionmaker(engine)() as session:
        lines = [f.line() for f in (await audit_verify.verify(session)).findings]
    assert "audit_log 2: altered: its MAC does not match its content" in lines


async def _legacy_row(
    session: AsyncSession,
    *,
    actor: str,
    action: str,
    subject: str,
    reason: str | None = None,
    details: dict[str, object],
) -> None:
    """An audit row as revision 0001 wrote it: plain SHA-256 chain, no key."""
    head = (
        await session.execute(sa.text("SELECT last_id, last_hash FROM audit_chain_head"))
    ).first()
    last_id, last_hash = (head[0], head[1]) if head else (0, audit.GENESIS_HASH)
    at = T0 + timedelta(seconds=last_id)
    text_ = audit.canonical_json(details)
    digest = audit.row_hash(
        prev_hash=last_hash, id=last_id + 1, at=at, actor=actor, action=action,
        subject=subject, reason=reason, details=text_,
    )  # fmt: skip
    values = {"i": last_id + 1, "at": at, "a": actor, "ac": action, "s": subject, "r": reason,
              "d": text_, "p": last_hash, "h": digest}  # fmt: skip
    await session.execute(
        sa.text(
            "INSERT INTO audit_log (id, at, actor, action, subject, reason, details,"
            " prev_hash, hash) VALUES (:i, :at, :a, :ac, :s, :r, :d, :p, :h)"
        ).bindparams(sa.bindparam("at", type_=UTCDateTime())),
        values,
    )
    if head is None:
        await session.execute(
            sa.text("INSERT INTO audit_chain_head (id, last_id, last_hash) VALUES (1, :i, :h)"),
            values,
        )
    else:
        await session.execute(
            sa.text("UPDATE audit_chain_head SET last_id = :i, last_hash = :h"), values
        )


def test_check_without_a_database_compares_models_with_the_revisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -m storage.migrate check``: what the next ``revision`` would write (none)."""
    monkeypatch.delenv("REELGATE_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    assert migrate.main(["check"]) == 0, STALE
    assert list(tmp_path.iterdir()) == []  # no reelgate.db left behind


async def test_0018_adds_the_last_sign_in_and_keeps_the_accounts(empty_db: EmptyDatabase) -> None:
    """Issue 26, item 4: an account of 0017 keeps every column and has no last sign-in
    (NULL, never backfilled: the row's seal covers its non-null columns); down again,
    the column goes and the account stays."""
    engine = empty_db.engine
    await migrate.upgrade_async(engine, "0017")
    async with engine.begin() as conn:
        await conn.execute(
            sa.text(
                "INSERT INTO users (name, role, password_hash, disabled, created_at, "
                "created_by, failed_logins) VALUES ('thandi', 'cashier', 'h', :d, :t, 'a', 2)"
            ),
            {"d": True, "t": T0},
        )
    await migrate.upgrade_async(engine, "0018")
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                sa.text("SELECT name, disabled, failed_logins, last_login_at FROM users")
            )
        ).one()
    assert (row[0], bool(row[1]), row[2], row[3]) == ("thandi", True, 2, None)
    await migrate.downgrade_async(engine, "0017")
    async with engine.connect() as conn:
        columns = await conn.run_sync(lambda c: inspect(c).get_columns("users"))
        assert "last_login_at" not in {c["name"] for c in columns}
        assert (await conn.execute(sa.text("SELECT name FROM users"))).scalar_one() == "thandi"


async def test_0019_adds_teams_one_team_per_player_h2(empty_db: EmptyDatabase) -> None:
    """Issue 30, teams (H2, H3): 0019 adds the team tables on a database of 0018 that
    already holds a tournament and a player; a second team for the same player, or a
    second captain, is refused by the schema itself; down again, the tables go and the
    tournament stays."""
    engine = empty_db.engine
    await migrate.upgrade_async(engine, "0018")
    async with make_sessionmaker(engine).begin() as session:
        b = Builder(session)
        t = await b.make_tournament()
        p, q = await b.player("Ann"), await b.player("Ben")
        ids = {"t": t.id, "p": p.id, "q": q.id}
    await migrate.upgrade_async(engine, "0019")
    insert_team = sa.text(
        "INSERT INTO teams (id, tournament_id, name, registered_by, registered_at)"
        " VALUES (:id, :t, :name, 'desk', :at)"
    )
    insert_member = sa.text(
        "INSERT INTO team_members (team_id, player_id, tournament_id, captain, added_by,"
        " added_at) VALUES (:team, :p, :t, :c, 'desk', :at)"
    )
    async with engine.begin() as conn:
        await conn.execute(insert_team, {"id": 1, "name": "Aces", "at": T0, **ids})
        await conn.execute(insert_team, {"id": 2, "name": "Kings", "at": T0, **ids})
        await conn.execute(insert_member, {"team": 1, "c": True, "at": T0, **ids})
    for clash in ({"team": 2, "p": ids["p"], "c": False}, {"team": 1, "p": ids["q"], "c": True}):
        with pytest.raises(sa.exc.IntegrityError):
            async with engine.begin() as conn:
                await conn.execute(insert_member, {**ids, **clash, "at": T0})
    await migrate.downgrade_async(engine, "0018")
    tables = await _tables(engine)
    assert not tables & {"teams", "team_members", "team_settings"}
    async with engine.connect() as conn:
        assert (await conn.execute(sa.text("SELECT count(*) FROM tournaments"))).scalar() == 1


async def test_0021_adds_walkup_tables_w1_w5(empty_db: EmptyDatabase) -> None:
    """Issue 30, walk-up play (W1, W5): 0021 adds the window and session tables on a
    database of 0020 holding a tournament; a window with no time is refused by the
    schema itself; down again, the tables go and the tournament
    stays."""
    engine = empty_db.engine
    await migrate.upgrade_async(engine, "0020")
    async with make_sessionmaker(engine).begin() as session:
        t = await Builder(session).make_tournament()
        tid = t.id
    await migrate.upgrade_async(engine, "0021")
    insert_window = sa.text(
        "INSERT INTO walkup_windows (tournament_id, bank_name, opens, closes,"
        " duration_seconds, starting_credits, confirm_seconds, enabled, set_by, set_at)"
        " VALUES (:t, :bank, '18:00', '23:00', :s, 500, 30, true, 'director', :at)"
    )
    async with engine.begin() as conn:
        await conn.execute(insert_window, {"t": tid, "bank": "A", "s": 300, "at": T0})
    with pytest.raises(sa.exc.IntegrityError):
        async with engine.begin() as conn:
            await conn.execute(insert_window, {"t": tid, "bank": "B", "s": 0, "at": T0})
    tables = await _tables(engine)
    assert {"walkup_windows", "walkup_sessions"} <= tables
    await migrate.downgrade_async(engine, "0020")
    tables = await _tables(engine)
    assert not tables & {"walkup_windows", "walkup_sessions"}
    async with engine.connect() as conn:
        assert (await conn.execute(sa.text("SELECT count(*) FROM tournaments"))).scalar() == 1


async def test_0022_adds_the_team_cut_and_team_prizes_h10_h12(empty_db: EmptyDatabase) -> None:
    """Issue 30, teams (H10–H12): on a database of 0021 that runs teams, 0022 adds the
    team cut (NULL: no cut, as every team set up before) and the team prize tables; a
    team place is paid once (the schema itself refuses a second payout); down again, the
    column and tables go and the team settings stay."""
    engine = empty_db.engine
    await migrate.upgrade_async(engine, "0021")
    async with make_sessionmaker(engine).begin() as session:
        b = Builder(session)
        t = await b.make_tournament()
        p = await b.player("Ann")
        ids = {"t": t.id, "p": p.id}
    async with engine.begin() as conn:
        await conn.execute(
            sa.text(
                "INSERT INTO team_settings (tournament_id, scoring, min_size, max_size, set_by,"
                " set_at) VALUES (:t, 'sum', 1, 2, 'director', :at)"
            ),
            {"at": T0, **ids},
        )
        await conn.execute(
            sa.text(
                "INSERT INTO teams (id, tournament_id, name, registered_by, registered_at)"
                " VALUES (1, :t, 'Aces', 'desk', :at)"
            ),
            {"at": T0, **ids},
        )
    await migrate.upgrade_async(engine, "0022")
    async with engine.connect() as conn:
        advance = (await conn.execute(sa.text("SELECT advance FROM team_settings"))).scalar()
    assert advance is None
    payout = sa.text(
        "INSERT INTO team_prize_payouts (tournament_id, stage, place, team_id, player_id,"
        " amount_cents, signer, signature, witness, paid_by, paid_at)"
        " VALUES (:t, 'qualifying', 1, 1, :p, 100, 'x', 'slip', 'w', 'cashier', :at)"
    )
    async with engine.begin() as conn:
        await conn.execute(payout, {"at": T0, **ids})
    with pytest.raises(sa.exc.IntegrityError):
        async with engine.begin() as conn:
            await conn.execute(payout, {"at": T0, **ids})
    await migrate.downgrade_async(engine, "0021")
    tables = await _tables(engine)
    assert not tables & {"team_prize_schedule", "team_prize_payouts"}
    async with engine.connect() as conn:
        columns = await conn.run_sync(lambda c: inspect(c).get_columns("team_settings"))
        assert "advance" not in {c["name"] for c in columns}
        assert (await conn.execute(sa.text("SELECT count(*) FROM team_settings"))).scalar() == 1
