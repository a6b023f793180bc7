"""AFT registration: the floor's key and POS ID per machine, and what preflight found

``floor_machine.aft_registration_key`` / ``aft_pos_id``: the gateway's AFT host identity
(SAS LP 73) for the machine, seeded from the floor file.  ``machine_aft_registration``:
per machine, the asset number and registration the last preflight found.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 12:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("floor_machine", schema=None) as batch_op:
        batch_op.add_column(sa.Column("aft_registration_key", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("aft_pos_id", sa.BigInteger(), nullable=True))
    op.create_table(
        "machine_aft_registration",
        sa.Column("machine_id", sa.String(length=32), nullable=False),
        sa.Column("asset_number", sa.BigInteger(), nullable=False),
        sa.Column("registered", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("pos_id", sa.BigInteger(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("registered_since", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["machine_id"],
            ["floor_machine.machine_id"],
            name=op.f("fk_machine_aft_registration_machine_id_floor_machine"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("machine_id", name=op.f("pk_machine_aft_registration")),
    )


def downgrade() -> None:
    op.drop_table("machine_aft_registration")
    with op.batch_alter_table("floor_machine", schema=None) as batch_op:
        batch_op.drop_column("aft_pos_id")
        batch_op.drop_column("aft_registration_key")
