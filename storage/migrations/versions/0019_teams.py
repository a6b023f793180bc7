"""teams: team settings, teams and members (house format H1-H9)

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07 11:23:09

``team_settings``, ``teams`` and ``team_members`` (storage.teams): new tables only, so
nothing existing changes and the downgrade drops them.  A player is in at most one team
per tournament (UNIQUE(tournament, player), H2) and a team has one captain (a partial
unique index, H3).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "team_settings",
        sa.Column(
            "tournament_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("scoring", sa.String(length=8), nullable=False),
        sa.Column("best_n", sa.Integer(), nullable=True),
        sa.Column("min_size", sa.Integer(), nullable=False),
        sa.Column("max_size", sa.Integer(), nullable=False),
        sa.Column("set_by", sa.String(length=100), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "(scoring = 'sum' AND best_n IS NULL) OR (scoring = 'best-n' AND best_n >= 1)",
            name=op.f("ck_team_settings_best_n_with_best_n"),
        ),
        sa.CheckConstraint(
            "scoring IN ('sum', 'best-n')", name=op.f("ck_team_settings_scoring_known")
        ),
        sa.CheckConstraint(
            "best_n IS NULL OR best_n <= max_size", name=op.f("ck_team_settings_best_n_fits")
        ),
        sa.CheckConstraint(
            "min_size >= 1 AND max_size >= min_size", name=op.f("ck_team_settings_sizes_in_order")
        ),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_team_settings_tournament_id_tournaments"),
        ),
        sa.PrimaryKeyConstraint("tournament_id", name=op.f("pk_team_settings")),
    )
    op.create_table(
        "teams",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "tournament_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("registered_by", sa.String(length=100), nullable=False),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"], ["tournaments.id"], name=op.f("fk_teams_tournament_id_tournaments")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_teams")),
        sa.UniqueConstraint("id", "tournament_id", name=op.f("uq_teams_id_tournament_id")),
        sa.UniqueConstraint("tournament_id", "name", name=op.f("uq_teams_tournament_id_name")),
    )
    op.create_table(
        "team_members",
        sa.Column("team_id", sa.BigInteger(), nullable=False),
        sa.Column(
            "player_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("tournament_id", sa.BigInteger(), nullable=False),
        sa.Column("captain", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("added_by", sa.String(length=100), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_team_members_player_id_players")
        ),
        sa.ForeignKeyConstraint(
            ["team_id", "tournament_id"],
            ["teams.id", "teams.tournament_id"],
            name=op.f("fk_team_members_team_id_tournament_id_teams"),
        ),
        sa.PrimaryKeyConstraint("team_id", "player_id", name=op.f("pk_team_members")),
        sa.UniqueConstraint(
            "tournament_id", "player_id", name=op.f("uq_team_members_tournament_id_player_id")
        ),
    )
    with op.batch_alter_table("team_members", schema=None) as batch_op:
        batch_op.create_index(
            "uq_team_members_one_captain",
            ["team_id"],
            unique=True,
            sqlite_where=sa.text("captain"),
            postgresql_where=sa.text("captain"),
        )


def downgrade() -> None:
    with op.batch_alter_table("team_members", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_team_members_one_captain",
            sqlite_where=sa.text("captain"),
            postgresql_where=sa.text("captain"),
        )

    op.drop_table("team_members")
    op.drop_table("teams")
    op.drop_table("team_settings")
