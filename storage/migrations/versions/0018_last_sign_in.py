"""last sign-in: when each account last proved its password

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-07 03:30:00

Nullable and NULL for every existing row: ``users`` is sealed and a row's seal digest
covers its non-null columns (storage/seals.py), so a backfill would make every old row
differ from its seal.  NULL reads as "no sign-in recorded".
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("last_login_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("last_login_at")
