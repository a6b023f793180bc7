"""Imports every model module so that ``Base.metadata`` knows all tables.

Each area keeps its tables in its own module; add one ``import`` line here.
"""

from __future__ import annotations

import storage.accounts
import storage.aft
import storage.attendance
import storage.audit
import storage.change_feed
import storage.database_mark
import storage.effects
import storage.floor
import storage.hotseat
import storage.journal
import storage.lease
import storage.machine_prizes
import storage.marks
import storage.prizes
import storage.seals
import storage.super9
import storage.teams
import storage.tournament  # (slot tournament)
import storage.walkup  # noqa: F401  (walk-up sessions)
