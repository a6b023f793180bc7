"""Whether the database is a training (rehearsal) database.

Every export and report carries ``"training": true|false`` read from here, from the
database's own mark (``reelgate db init --training``; :mod:`storage.database_mark`),
which no command can clear: a training database's records always say so.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from storage.database_mark import is_training as marked_training


async def is_training(session: AsyncSession) -> bool:
    return await marked_training(session)
