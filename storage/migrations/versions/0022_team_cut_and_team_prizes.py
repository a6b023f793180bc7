"""team cut, team prizes (house clauses H10-H12, docs/rules.md)

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-07 15:29:34.628795

Two new tables (the team prize schedule, H11, and team payouts, H12) and one nullable
column on ``team_settings`` (``advance``, the team cut, H10: NULL is no cut, as every
tournament set up before this revision).  Follows the walk-up sessions' 0021.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | Sequence[str] | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "team_prize_schedule",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "tournament_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column(
            "stage",
            sa.Enum(
                "qualifying",
                "semi-final",
                "final",
                name="stage",
                native_enum=False,
                create_constraint=True,
                length=32,
            ),
            nullable=False,
        ),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("cents", sa.BigInteger(), nullable=False),
        sa.Column("set_by", sa.String(length=100), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("cents > 0", name=op.f("ck_team_prize_schedule_cents_positive_h11")),
        sa.CheckConstraint("place >= 1", name=op.f("ck_team_prize_schedule_place_positive")),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_team_prize_schedule_tournament_id_tournaments"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_team_prize_schedule")),
        sa.UniqueConstraint(
            "tournament_id",
            "stage",
            "place",
            name=op.f("uq_team_prize_schedule_tournament_id_stage_place"),
        ),
    )
    op.create_table(
        "team_prize_payouts",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("tournament_id", sa.BigInteger(), nullable=False),
        sa.Column(
            "stage",
            sa.Enum(
                "qualifying",
                "semi-final",
                "final",
                name="stage",
                native_enum=False,
                create_constraint=True,
                length=32,
            ),
            nullable=False,
        ),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.BigInteger(), nullable=False),
        sa.Column(
            "player_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.Column("signer", sa.String(length=32), nullable=False),
        sa.Column("signature", sa.String(length=200), nullable=False),
        sa.Column("witness", sa.String(length=200), nullable=False),
        sa.Column("paid_by", sa.String(length=100), nullable=False),
        sa.Column("paid_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("amount_cents > 0", name=op.f("ck_team_prize_payouts_amount_positive")),
        sa.CheckConstraint(
            "witness <> signer", name=op.f("ck_team_prize_payouts_witness_not_signer_h12")
        ),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_team_prize_payouts_player_id_players")
        ),
        sa.ForeignKeyConstraint(
            ["team_id", "tournament_id"],
            ["teams.id", "teams.tournament_id"],
            name=op.f("fk_team_prize_payouts_team_id_tournament_id_teams"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_team_prize_payouts")),
        sa.UniqueConstraint(
            "tournament_id",
            "stage",
            "place",
            name=op.f("uq_team_prize_payouts_tournament_id_stage_place"),
        ),
    )
    with op.batch_alter_table("team_settings", schema=None) as batch_op:
        batch_op.add_column(sa.Column("advance", sa.Integer(), nullable=True))
        batch_op.create_check_constraint(
            op.f("ck_team_settings_advance_positive_h10"), "advance IS NULL OR advance >= 1"
        )


def downgrade() -> None:
    with op.batch_alter_table("team_settings", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_team_settings_advance_positive_h10"), type_="check")
        batch_op.drop_column("advance")

    op.drop_table("team_prize_payouts")
    op.drop_table("team_prize_schedule")
