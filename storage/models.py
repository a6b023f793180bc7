"""Imports every model module so that ``Base.metadata`` knows all tables.

Each area keeps its tables in its own module; add the import here.
"""

from __future__ import annotations
