"""money by tender: sales, refunds and Super 9 tickets carry their tender; idempotent sales

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-06 20:00:00

Every column is nullable and old rows keep NULL: these tables are sealed, and a row's
seal digest covers its non-null columns (storage/seals.py), so a backfill would make
every old row differ from its seal.  A NULL tender reads as the one the row's kind
implies (card for a card sale, comp for a complimentary entry, else cash).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("entry_purchases") as batch:
        batch.add_column(sa.Column("tender", sa.String(length=8), nullable=True))
        # (cashier, venue day, till slip) or the API's Idempotency-Key, per cashier.
        batch.add_column(sa.Column("idempotency_key", sa.String(length=200), nullable=True))
        # SHA-256 of what was asked: a retry must ask the same to get the same sale.
        batch.add_column(sa.Column("request_digest", sa.String(length=64), nullable=True))
        batch.create_unique_constraint(
            op.f("uq_entry_purchases_idempotency_key"), ["idempotency_key"]
        )
        batch.create_check_constraint(
            op.f("ck_entry_purchases_tender_of_kind"),
            "tender IS NULL"
            " OR (kind = 'complimentary' AND tender = 'comp')"
            " OR (kind = 'card' AND tender = 'card')"
            " OR (kind IN ('cash', 'package') AND tender = 'cash')",
        )
    with op.batch_alter_table("refunds") as batch:
        batch.add_column(sa.Column("tender", sa.String(length=8), nullable=True))
        batch.create_check_constraint(
            op.f("ck_refunds_tender_known"), "tender IS NULL OR tender IN ('cash', 'card', 'comp')"
        )
    with op.batch_alter_table("super9_ticket") as batch:
        batch.add_column(sa.Column("tender", sa.String(length=8), nullable=True))
        batch.create_check_constraint(
            op.f("ck_super9_ticket_tender_known"), "tender IS NULL OR tender IN ('cash', 'card')"
        )


def downgrade() -> None:
    with op.batch_alter_table("super9_ticket") as batch:
        batch.drop_constraint(op.f("ck_super9_ticket_tender_known"), type_="check")
        batch.drop_column("tender")
    with op.batch_alter_table("refunds") as batch:
        batch.drop_constraint(op.f("ck_refunds_tender_known"), type_="check")
        batch.drop_column("tender")
    with op.batch_alter_table("entry_purchases") as batch:
        batch.drop_constraint(op.f("ck_entry_purchases_tender_of_kind"), type_="check")
        batch.drop_constraint(op.f("uq_entry_purchases_idempotency_key"), type_="unique")
        batch.drop_column("request_digest")
        batch.drop_column("idempotency_key")
        batch.drop_column("tender")
