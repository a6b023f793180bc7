"""heat seat baseline

``heat_run_machine.baseline``: a machine's meters at tournament entry (JSON), so a
host-timed heat's games and wagers survive a gateway restart.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 12:55:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("heat_run_machine") as batch:
        batch.add_column(sa.Column("baseline", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("heat_run_machine") as batch:
        batch.drop_column("baseline")
