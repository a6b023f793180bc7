"""Errors shown to a technician, director or cashier as one clear line."""

from __future__ import annotations


class OperatorError(Exception):
    """Bad input or a refused action; the message names the rule or field.

    Raising it must leave nothing changed: commands validate before they write.
    """


class IdempotencyConflict(OperatorError):
    """A retry's key was first used for a different request (HTTP 409): nothing saved."""
