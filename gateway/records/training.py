"""Whether the database is a training (rehearsal) database.

Every export and report carries ``"training": true|false`` read from here.  The marker
itself (``reelgate db init --training``, issue 13 item 4) is not built yet: until it is,
no database is a training database, so this says ``False``.  When the marker lands,
this function reads it and every export and cash-up follows without further change.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession


async def is_training(session: AsyncSession) -> bool:
    """No training marker exists in the schema yet: every database is production."""
    del session  # the marker will be read through it
    return False
