"""The sealed rows a transaction wrote, noted for its seal at commit (:mod:`storage.seals`).

Apart from the seals themselves so that a writer the seals' module depends on (the
journal's bulk insert of a bank's scores) can note the rows it wrote without the ORM's
unit of work: an ORM flush notes its rows through :mod:`storage.seals`' ``after_flush``
hook, a bulk insert calls :func:`note` for each row it wrote.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session, SessionTransaction

PENDING = "reelgate_seal_pending"  # session.info: {(table, id): the transaction}


def note(session: Session, table: str, row_id: Any) -> None:
    """Seal row ``row_id`` of ``table`` at this transaction's commit."""
    # Each row with the transaction it was first noted in: a savepoint rolled back
    # forgets the rows first changed inside it (their changes are undone).
    pending: dict[tuple[str, int], SessionTransaction | None] = session.info.setdefault(
        PENDING, {}
    )
    pending.setdefault(
        (table, int(row_id)), session.get_nested_transaction() or session.get_transaction()
    )
