"""rules as written: Super 9 verification section, T14 top-player setting

``super9_ticket.verification``: the ticket's verification section as keyed at hand-in
(S9-7).
``tournament_settings.top_player_excluded``: whether the top qualifier's other entries
are kept out of the semi-finals (T14).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 10:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tournament_settings", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("top_player_excluded", sa.Boolean(), server_default=sa.true(), nullable=False)
        )
    with op.batch_alter_table("super9_ticket", schema=None) as batch_op:
        batch_op.add_column(sa.Column("verification", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tournament_settings", schema=None) as batch_op:
        batch_op.drop_column("top_player_excluded")
    with op.batch_alter_table("super9_ticket", schema=None) as batch_op:
        batch_op.drop_column("verification")
