"""snmp secrets out of the database

``floor_machine.snmp_endpoint`` used to carry the SNMPv3 passphrases
(``?user=U&auth=A&priv=P``) or the v2c community (``?community=C``).  Secrets must not
live in the database: this data step keeps only the endpoint and the v3 user
(``udp://host:port?user=U``) or the fact that v2c is used (``?version=2c``), the form
``gateway.floor.SnmpRef.text`` writes.  The secrets now come from the SNMP secrets file
(``--snmp-secrets`` / ``REELGATE_SNMP_SECRETS``) or the floor file, for the run only.

No schema change.  Downgrade leaves the stripped texts as they are: the secrets are gone
for good, which is the point.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29 19:28:36.226765
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A stand-in, never the model (storage/README.md).
_machine = sa.table(
    "floor_machine",
    sa.column("machine_id", sa.String),
    sa.column("snmp_endpoint", sa.String),
)


def stripped(text: str) -> str:
    """``text`` without any secret: endpoint plus ``?user=U`` or ``?version=2c``."""
    base, _, query = text.partition("?")
    params = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
    if "user" in params:
        keep = {"user": params["user"]}
    elif "community" in params or params.get("version") == "2c":
        keep = {"version": "2c"}
    else:
        return base  # nothing recognisable to keep: the endpoint alone, still no secret
    return f"{base}?{urllib.parse.urlencode(keep)}"


def upgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(_machine.c.machine_id, _machine.c.snmp_endpoint).where(
            _machine.c.snmp_endpoint.is_not(None)
        )
    ).all()
    for machine_id, text in rows:
        clean = stripped(text)
        if clean != text:
            bind.execute(
                _machine.update()
                .where(_machine.c.machine_id == machine_id)
                .values(snmp_endpoint=clean)
            )


def downgrade() -> None:
    # The secrets stripped by upgrade() cannot come back (they are not kept anywhere).
    pass
