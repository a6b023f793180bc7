"""heat formats: games-limited and credit-limited heats (house clauses F1-F5, docs/rules.md)

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-07 16:45:00.000000

Two columns: ``tournament_settings.heat_format`` (the tournament's format, F1, as the
spec ``timed`` / ``games-limited:N`` / ``credit-limited:M``; every tournament set up
before this revision runs timed heats) and ``heat_run.format`` (the format journaled on
each run when it is created, F5: NULL, as every run before this revision, is timed).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | Sequence[str] | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tournament_settings", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("heat_format", sa.String(length=40), server_default="timed", nullable=False)
        )
    with op.batch_alter_table("heat_run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("format", sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("heat_run", schema=None) as batch_op:
        batch_op.drop_column("format")
    with op.batch_alter_table("tournament_settings", schema=None) as batch_op:
        batch_op.drop_column("heat_format")
