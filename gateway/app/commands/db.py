"""``reelgate db init|upgrade|check|backup|restore``: the database schema, migrated only
when asked, and its backups.

``init`` creates the database and writes its kind once — production, or with
``--training`` a training database for rehearsals and tests, which takes free keyed
times and says TRAINING wherever it is shown; the kind never changes afterwards (no
command clears it, and the database refuses to).  ``upgrade`` creates the database (a
SQLite file included) or migrates it to the newest revision and prints ``from -> to``;
``check`` prints the revision and the kind and exits 0 only at the newest revision.
Every other command refuses a database at another revision.  ``backup`` and
``restore``: :mod:`gateway.app.commands.db_backup`.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from gateway.app import database, keyed
from gateway.app.commands import db_backup
from gateway.app.options import add_database


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "db", help="create, migrate or check the database schema; back it up, restore it"
    )
    actions = parser.add_subparsers(dest="db_action", required=True, metavar="ACTION")
    init = actions.add_parser("init", help="create the database: production, or --training")
    add_database(init)
    init.add_argument(
        "--training",
        action="store_true",
        help="a training / rehearsal database: free keyed times, marked TRAINING for good",
    )
    init.set_defaults(handler=_init)
    up = actions.add_parser("upgrade", help="create or migrate the database to this reelgate")
    add_database(up)
    up.set_defaults(handler=_upgrade)
    check = actions.add_parser("check", help="print the revision; exit 1 unless it is current")
    add_database(check)
    check.set_defaults(handler=_check)
    db_backup.register(actions)


def _init(args: argparse.Namespace) -> int:
    from gateway.app.identity import host_actor

    before, after, kind = asyncio.run(
        database.init(args.database, training=args.training, by=host_actor())
    )
    url = database.safe_url(database.resolve(args.database))
    print(f"database {url}: revision {before or '(empty)'} -> {after}, {kind} database")
    if kind == "training":
        keyed.banner(True)
    return 0


def _upgrade(args: argparse.Namespace) -> int:
    before, after = asyncio.run(database.upgrade(args.database))
    url = database.safe_url(database.resolve(args.database))
    print(f"database {url}: revision {before or '(empty)'} -> {after}")
    return 0


def _check(args: argparse.Namespace) -> int:
    found = asyncio.run(database.revision_of(args.database))
    head = database.head_revision()
    if found == head:
        kind = asyncio.run(database.kind_of(args.database))
        print(f"database at revision {found} (current), {kind} database")
        if kind == "training":
            keyed.banner(True)
        return 0
    print(f"database at revision {found or '(empty)'}, this reelgate needs {head}: "
          f"run {database.UPGRADE}")  # fmt: skip
    return 1
