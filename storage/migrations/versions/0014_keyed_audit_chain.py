"""keyed audit chain and signed checkpoints

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01 12:30:00.000000

Existing audit rows are kept as they are (``keyed`` false, their SHA-256 chain
unchanged): they are sealed by the genesis row of the keyed chain at the first keyed
write (storage.audit), never re-signed.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("keyed", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    with op.batch_alter_table("audit_chain_head", schema=None) as batch_op:
        batch_op.add_column(sa.Column("keyed_from", sa.BigInteger(), nullable=True))
    op.create_table(
        "audit_checkpoint",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("mac", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reason", sa.String(length=200), nullable=False),
        sa.Column("signature", sa.String(length=128), nullable=False),
        sa.Column("key_fingerprint", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_checkpoint")),
    )
    with op.batch_alter_table("audit_checkpoint", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_audit_checkpoint_position"), ["position"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("audit_checkpoint", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audit_checkpoint_position"))
    op.drop_table("audit_checkpoint")
    with op.batch_alter_table("audit_chain_head", schema=None) as batch_op:
        batch_op.drop_column("keyed_from")
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.drop_column("keyed")
