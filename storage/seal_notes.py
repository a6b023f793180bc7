"""The sealed rows a transaction wrote, noted for its seal at commit (:mod:`storage.seals`).

Apart from the seals themselves so that a writer the seals' module depends on (the
journal's bulk insert of a bank's scores) can note the rows it wrote without the ORM's
unit of work: an ORM flush notes its rows through :mod:`storage.seals`' ``after_flush``
hook, a bulk insert calls :func:`note` for each row it wrote.
"""

from __future__ import annotations

from sqlalchemy.orm import Session, SessionTransaction

PENDING = "reelgate_seal_pending"  # session.info: {(table, key): the transaction}
# A row's primary key: an id or a one-column key's value, or a composite key's values.
Key = int | str | tuple[int | str, ...]


def note(session: Session, table: str, row_id: Key) -> None:
    """Seal row ``row_id`` (its key) of ``table`` at this transaction's commit."""
    # Each row with the transaction it was first noted in: a savepoint rolled back
    # forgets the rows first changed inside it (their changes are undone).
    pending: dict[tuple[str, Key], SessionTransaction | None] = session.info.setdefault(PENDING, {})
    key = row_id if isinstance(row_id, str | tuple) else int(row_id)
    pending.setdefault((table, key), session.get_nested_transaction() or session.get_transaction())
