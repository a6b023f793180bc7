"""prize schedule and payouts

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 10:36:03.222180
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # T15 prizes: the advertised schedule, the surplus decision, the payouts.
    op.create_table(
        "prize_schedule",
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
        sa.Column("minimum_cents", sa.BigInteger(), nullable=False),
        sa.Column("surplus_cents", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("set_by", sa.String(length=100), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "minimum_cents > 0", name=op.f("ck_prize_schedule_minimum_positive_rule_15")
        ),
        sa.CheckConstraint("place >= 1", name=op.f("ck_prize_schedule_place_positive")),
        sa.CheckConstraint(
            "surplus_cents >= 0", name=op.f("ck_prize_schedule_surplus_not_negative")
        ),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_prize_schedule_tournament_id_tournaments"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_prize_schedule")),
        sa.UniqueConstraint(
            "tournament_id",
            "stage",
            "place",
            name=op.f("uq_prize_schedule_tournament_id_stage_place"),
        ),
    )
    op.create_table(
        "prize_surplus",
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
        sa.Column("surplus_cents", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("decided_by", sa.String(length=100), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "surplus_cents >= 0", name=op.f("ck_prize_surplus_surplus_not_negative")
        ),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_prize_surplus_tournament_id_tournaments"),
        ),
        sa.PrimaryKeyConstraint("tournament_id", "stage", name=op.f("pk_prize_surplus")),
    )
    op.create_table(
        "prize_payouts",
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
        sa.Column("entry_id", sa.BigInteger(), nullable=False),
        sa.Column("player_id", sa.BigInteger(), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.Column("signer", sa.String(length=32), nullable=False),
        sa.Column("signature", sa.String(length=200), nullable=False),
        sa.Column("witness", sa.String(length=200), nullable=False),
        sa.Column("paid_by", sa.String(length=100), nullable=False),
        sa.Column("paid_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("amount_cents > 0", name=op.f("ck_prize_payouts_amount_positive")),
        sa.CheckConstraint(
            "witness <> signer", name=op.f("ck_prize_payouts_witness_not_signer_rule_15")
        ),
        sa.ForeignKeyConstraint(
            ["entry_id", "tournament_id", "player_id"],
            ["entries.id", "entries.tournament_id", "entries.player_id"],
            name=op.f("fk_prize_payouts_entry_id_tournament_id_player_id_entries"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_prize_payouts")),
        sa.UniqueConstraint(
            "tournament_id",
            "stage",
            "place",
            name=op.f("uq_prize_payouts_tournament_id_stage_place"),
        ),
    )


def downgrade() -> None:
    # T15 prizes: the advertised schedule, the surplus decision, the payouts.
    op.drop_table("prize_payouts")
    op.drop_table("prize_surplus")
    op.drop_table("prize_schedule")
