"""Imports every model module so that ``Base.metadata`` knows all tables.

Each area keeps its tables in its own module; add the import here.
"""

from __future__ import annotations
from storage import floor, journal  # noqa: F401  (gateway: floor tables, heat run journal)
from storage import super9  # noqa: F401  (Super 9 promotion tables)
from storage import audit, tournament  # noqa: F401  (audit log; slot tournament tables)
