"""``reelgate db backup`` and ``db restore``: a copy of the whole database, and back.

SQLite through its online backup API (:mod:`.sqlite_files`: a consistent copy while the
gateway runs, page by page, and restored the same way); PostgreSQL through its own tools,
``pg_dump -Fc`` and ``pg_restore`` (:mod:`.pg_tools`).  Before a restore touches anything
(:mod:`.guard`): the backup must be readable, of the target's kind and at a schema
revision this Reelgate knows, and the target must have no heat in progress, no heat whose
machines are not back in normal play, and no live bank lease (a gateway serving it).
"""
