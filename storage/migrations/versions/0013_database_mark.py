"""database mark: production or training, permanent

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01 12:05:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_MESSAGE = "database_mark is permanent: a training database stays training"
_PG_FUNCTION = f"""
CREATE FUNCTION database_mark_is_permanent() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '{_MESSAGE}';
END;
$$ LANGUAGE plpgsql
"""


def upgrade() -> None:
    op.create_table(
        "database_mark",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("marked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("marked_by", sa.String(length=100), nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_database_mark_single_row")),
        sa.CheckConstraint(
            "kind IN ('production', 'training')", name=op.f("ck_database_mark_kind")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_database_mark")),
    )
    # Once written the mark never changes: the database itself refuses an UPDATE or a
    # DELETE (so does TRUNCATE on PostgreSQL), whoever sends it.
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_PG_FUNCTION)
        op.execute(
            "CREATE TRIGGER database_mark_no_change BEFORE UPDATE OR DELETE ON database_mark "
            "FOR EACH ROW EXECUTE FUNCTION database_mark_is_permanent()"
        )
        op.execute(
            "CREATE TRIGGER database_mark_no_truncate BEFORE TRUNCATE ON database_mark "
            "FOR EACH STATEMENT EXECUTE FUNCTION database_mark_is_permanent()"
        )
    else:
        for event in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER database_mark_no_{event.lower()} BEFORE {event} "
                f"ON database_mark BEGIN SELECT RAISE(ABORT, '{_MESSAGE}'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS database_mark_no_truncate ON database_mark")
        op.execute("DROP TRIGGER IF EXISTS database_mark_no_change ON database_mark")
        op.execute("DROP FUNCTION IF EXISTS database_mark_is_permanent()")
    op.drop_table("database_mark")
