"""``reelgate db upgrade|check|backup|restore``: the database schema, migrated only when
asked, and its backups.

``upgrade`` creates the database (a SQLite file included) or migrates it to the newest
revision and prints ``from -> to``; ``check`` prints the revision and exits 0 only at
the newest one.  Every other command refuses a database at another revision.
``backup`` and ``restore``: :mod:`gateway.app.commands.db_backup`.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from gateway.app import database
from gateway.app.commands import db_backup
from gateway.app.options import add_database


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "db", help="create, migrate or check the database schema; back it up, restore it"
    )
    actions = parser.add_subparsers(dest="db_action", required=True, metavar="ACTION")
    up = actions.add_parser("upgrade", help="create or migrate the database to this reelgate")
    add_database(up)
    up.set_defaults(handler=_upgrade)
    check = actions.add_parser("check", help="print the revision; exit 1 unless it is current")
    add_database(check)
    check.set_defaults(handler=_check)
    db_backup.register(actions)


def _upgrade(args: argparse.Namespace) -> int:
    before, after = asyncio.run(database.upgrade(args.database))
    url = database.safe_url(database.resolve(args.database))
    print(f"database {url}: revision {before or '(empty)'} -> {after}")
    return 0


def _check(args: argparse.Namespace) -> int:
    return db_backup.report_revision(args.database)
