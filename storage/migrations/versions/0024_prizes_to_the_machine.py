"""prizes to the machine (house clauses P1-P7, docs/rules.md)

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-07 16:40:00.000000

Two new tables (the venue's setting, P1, and the transfer journal, P4/P5; a done
transfer names its payout row, whose tender the cash-up then reads as ``machine (AFT)``,
P6).  Nothing existing changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | Sequence[str] | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OPEN = sa.text("status in ('journaled', 'done')")


def upgrade() -> None:
    op.create_table(
        "machine_prize_setting",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("allowed", sa.Boolean(), nullable=False),
        sa.Column("expiration_days", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("set_by", sa.String(length=100), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "expiration_days between 1 and 9999",
            name=op.f("ck_machine_prize_setting_expiration_days_range"),
        ),
        sa.CheckConstraint("id = 1", name=op.f("ck_machine_prize_setting_one_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_machine_prize_setting")),
    )
    op.create_table(
        "machine_prize_transfers",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("transaction_id", sa.String(length=20), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("ref", sa.String(length=100), nullable=False),
        sa.Column("machine_id", sa.String(length=32), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.Column("expiration_days", sa.Integer(), nullable=False),
        sa.Column("signer", sa.String(length=32), nullable=False),
        sa.Column("signature", sa.String(length=200), nullable=False),
        sa.Column("witness", sa.String(length=200), nullable=False),
        sa.Column("requested_by", sa.String(length=100), nullable=False),
        sa.Column("journaled_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sends", sa.Integer(), server_default="0", nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("egm_status", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("settled_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("payout_id", sa.BigInteger(), nullable=True),
        sa.CheckConstraint(
            "amount_cents > 0", name=op.f("ck_machine_prize_transfers_amount_positive")
        ),
        sa.CheckConstraint(
            "kind in ('prize', 'hotseat')", name=op.f("ck_machine_prize_transfers_kind_known")
        ),
        sa.CheckConstraint(
            "status in ('journaled', 'done', 'refused', 'unknown')",
            name=op.f("ck_machine_prize_transfers_status_known"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_machine_prize_transfers")),
    )
    op.create_index(
        "uq_machine_prize_transfers_transaction_id",
        "machine_prize_transfers",
        ["transaction_id"],
        unique=True,
    )
    op.create_index(
        "uq_machine_prize_transfers_one_open_per_prize",
        "machine_prize_transfers",
        ["kind", "ref"],
        unique=True,
        sqlite_where=_OPEN,
        postgresql_where=_OPEN,
    )


def downgrade() -> None:
    op.drop_index(
        "uq_machine_prize_transfers_one_open_per_prize",
        table_name="machine_prize_transfers",
        sqlite_where=_OPEN,
        postgresql_where=_OPEN,
    )
    op.drop_index("uq_machine_prize_transfers_transaction_id", table_name="machine_prize_transfers")
    op.drop_table("machine_prize_transfers")
    op.drop_table("machine_prize_setting")
