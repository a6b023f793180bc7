"""``reelgate db upgrade|check``: the database schema, migrated only when asked.

``upgrade`` creates the database (a SQLite file included) or migrates it to the newest
revision and prints ``from -> to``; ``check`` prints the revision and exits 0 only at
the newest one.  Every other command refuses a database at another revision.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from gateway.app import database
from gateway.app.options import add_database


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "db", help="create, migrate or check the database schema"
    )
    actions = parser.add_subparsers(dest="db_action", required=True, metavar="ACTION")
    up = actions.add_parser("upgrade", help="create or migrate the database to this reelgate")
    add_database(up)
    up.set_defaults(handler=_upgrade)
    check = actions.add_parser("check", help="print the revision; exit 1 unless it is current")
    add_database(check)
    check.set_defaults(handler=_check)


def _upgrade(args: argparse.Namespace) -> int:
    before, after = asyncio.run(database.upgrade(args.database))
    url = database.safe_url(database.resolve(args.database))
    print(f"database {url}: revision {before or '(empty)'} -> {after}")
    return 0


def _check(args: argparse.Namespace) -> int:
    found = asyncio.run(database.revision_of(args.database))
    head = database.head_revision()
    if found == head:
        print(f"database at revision {found} (current)")
        return 0
    print(f"database at revision {found or '(empty)'}, this reelgate needs {head}: "
          f"run {database.UPGRADE}")  # fmt: skip
    return 1
