"""heat formats: games-limited and credit-limited heats (house clauses F1-F5, docs/rules.md)

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-07 16:45:00.000000

Two tables and a column: ``tournament_formats`` (a tournament whose heats are not timed,
F1, its format as the spec ``games-limited:N`` / ``credit-limited:M``; no row, as every
tournament before this revision, runs timed heats), ``sit_and_go_heats`` (a heat started
once N of its seats would play, F6) and ``heat_run.format`` (the format journaled on each
run when it is created, F5: NULL, as every run before this revision, is timed).  New
tables rather than columns on the sealed ``tournament_settings`` and ``heats``: a new
column there would change no digest (NULL columns are left out) but every sealed read
of a database still at an older revision would ask for it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | Sequence[str] | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "tournament_formats",
        sa.Column("tournament_id", _ID, nullable=False),
        sa.Column("format", sa.String(length=40), nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_formats_tournament_id_tournaments"),
        ),
        sa.PrimaryKeyConstraint("tournament_id", name=op.f("pk_tournament_formats")),
    )
    op.create_table(
        "sit_and_go_heats",
        sa.Column("heat_id", _ID, nullable=False),
        sa.Column("seats", sa.Integer(), nullable=False),
        sa.CheckConstraint("seats >= 1", name=op.f("ck_sit_and_go_heats_seats_positive_f6")),
        sa.ForeignKeyConstraint(
            ["heat_id"], ["heats.id"], name=op.f("fk_sit_and_go_heats_heat_id_heats")
        ),
        sa.PrimaryKeyConstraint("heat_id", name=op.f("pk_sit_and_go_heats")),
    )
    with op.batch_alter_table("heat_run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("format", sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("heat_run", schema=None) as batch_op:
        batch_op.drop_column("format")
    op.drop_table("sit_and_go_heats")
    op.drop_table("tournament_formats")
