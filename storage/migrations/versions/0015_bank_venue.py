"""bank venue: which venue's gateway serves a bank in a shared central database

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01 19:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # NULL: a single-venue installation, whose one gateway serves every bank.
    with op.batch_alter_table("floor_bank") as batch:
        batch.add_column(sa.Column("venue", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("floor_bank") as batch:
        batch.drop_column("venue")
