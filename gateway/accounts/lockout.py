"""Login backoff and lockout, from the count of failed logins since the last success.

The first :data:`FREE_TRIES` failures cost nothing; each later one locks the account for
twice as long as the one before (from :data:`FIRST_DELAY`, at most :data:`MAX_DELAY`).
After :data:`LOCK_AFTER` failures the account is locked until an administrator resets
its password.  Pure: the caller passes the clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta

FREE_TRIES = 3
FIRST_DELAY = timedelta(seconds=2)
MAX_DELAY = timedelta(minutes=15)
LOCK_AFTER = 10


def refusal(failed_logins: int, locked_until: datetime | None, now: datetime) -> str | None:
    """Why a login may not even be tried now, or None."""
    if failed_logins >= LOCK_AFTER:
        return "login: account locked after repeated failures; an administrator must reset it"
    if locked_until is not None and now < locked_until:
        wait = int((locked_until - now).total_seconds()) + 1
        return f"login: too many failed attempts; try again in {wait} s"
    return None


def locked_until_after(failed_logins: int, now: datetime) -> datetime | None:
    """When the next try is allowed after ``failed_logins`` failures in a row."""
    if failed_logins <= FREE_TRIES:
        return None
    delay = FIRST_DELAY * int(2 ** min(failed_logins - FREE_TRIES - 1, 20))
    return now + min(delay, MAX_DELAY)
