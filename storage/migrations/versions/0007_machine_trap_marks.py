"""machine trap marks

``machine_trap_mark``: SNMP trap marks on machines, kept across restarts (storage.marks).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 09:53:46.301238
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "machine_trap_mark",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("machine_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heat_id", sa.String(length=64), nullable=False),
        sa.Column("mid_heat", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_machine_trap_mark")),
    )
    with op.batch_alter_table("machine_trap_mark", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_machine_trap_mark_machine_id"), ["machine_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("machine_trap_mark", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_machine_trap_mark_machine_id"))
    op.drop_table("machine_trap_mark")
