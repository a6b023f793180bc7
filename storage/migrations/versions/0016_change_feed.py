"""change feed: a screen-facing outbox, one row per stored change a screen shows

``change_feed`` (storage.change_feed): written at commit in the same transaction as the
change (a score, a correction, a draw, a sale, a Super 9 spin...), read by the process
serving the console and the signs (gateway.web.change_reader).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06 20:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "change_feed",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("tournament_id", sa.BigInteger(), nullable=True),
        sa.Column("heat_id", sa.BigInteger(), nullable=True),
        sa.Column("session_id", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_change_feed")),
    )
    op.create_index(op.f("ix_change_feed_at"), "change_feed", ["at"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_change_feed_at"), table_name="change_feed")
    op.drop_table("change_feed")
