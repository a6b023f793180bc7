"""Column types shared by every model module.

``UTCDateTime`` keeps timestamps time-zone aware on both backends: PostgreSQL stores
``timestamptz`` natively, SQLite has no zone type, so values are normalised to UTC on
the way in (naive values are refused, never guessed) and given UTC back on the way out.
Every stored instant therefore compares and sorts the same on both databases.

``enum_type`` stores a Python :class:`enum.Enum` by *value* as a short string with a
CHECK constraint, identical on both backends (no PostgreSQL ``CREATE TYPE`` to migrate).
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Dialect, Enum, String, event
from sqlalchemy.orm import Mapper
from sqlalchemy.types import TypeDecorator

ENUM_LENGTH = 32


class UTCDateTime(TypeDecorator[datetime]):
    """An aware ``datetime`` stored as UTC; naive datetimes raise ``ValueError``."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected a datetime, got {type(value).__name__}")
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value.isoformat()} refused: give it a time zone")
        utc = value.astimezone(UTC)
        # SQLite's DateTime would keep the offset text but compare as strings; plain UTC
        # without offset sorts correctly.
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def enum_type(enum_class: type[enum.Enum], name: str) -> Enum:
    """A VARCHAR(32) + CHECK column holding the enum's values (``'semi-final'``, not names).

    The fixed length lets a later migration add a value by changing only the CHECK.
    """
    if max(len(str(m.value)) for m in enum_class) > ENUM_LENGTH:
        raise ValueError(f"{enum_class.__name__} has a value longer than {ENUM_LENGTH}")
    return Enum(
        enum_class,
        name=name,
        native_enum=False,
        create_constraint=True,
        validate_strings=True,
        length=ENUM_LENGTH,
        values_callable=_values,
    )


def _values(enum_class: Any) -> list[str]:
    return [str(member.value) for member in enum_class]


def utcnow() -> datetime:
    """The current instant, aware, in UTC (column default)."""
    return datetime.now(UTC)


class ValueTooLong(ValueError):
    """Text longer than its column: refused before the database sees it."""


def _check_lengths(mapper: Mapper[Any], _connection: Any, target: Any) -> None:
    for column in mapper.columns:
        limit = getattr(column.type, "length", None)
        if not isinstance(column.type, String) or limit is None or column.key is None:
            continue
        value = getattr(target, column.key, None)
        if isinstance(value, str) and len(value) > limit:
            where = f"{mapper.class_.__tablename__}.{column.name}"
            raise ValueTooLong(f"{where}: {len(value)} characters, at most {limit}")


def check_text_lengths(*models: type[Any]) -> None:
    """Refuse over-long text on insert and update, naming the column, on both backends.

    PostgreSQL would refuse it anyway (with no column name); SQLite would store it, so
    a database could hold data that PostgreSQL cannot take.
    """
    for model in models:
        event.listen(model, "before_insert", _check_lengths)
        event.listen(model, "before_update", _check_lengths)
