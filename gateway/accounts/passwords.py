"""The password policy: long enough, not one character repeated, and not easy to guess.

"Easy to guess" is zxcvbn's judgement (the maintained Python port of Dropbox's
estimator, with its own lists of common passwords, names, words and keyboard patterns,
shipped in the package: nothing is fetched).  A score under :data:`MIN_SCORE` of 4 is
refused; the account's name and the product's name count as known words.  zxcvbn looks
at the first :data:`CHECKED` characters (its own limit; past them a password is long
enough anyway).  Every refusal is one line naming the rule.
"""

from __future__ import annotations

from zxcvbn import zxcvbn

PASSWORD_MIN = 10
PASSWORD_MAX = 1024
MIN_SCORE = 3  # zxcvbn: "safely unguessable: moderate protection from offline attack"
CHECKED = 72
_KNOWN = ["reelgate", "casino", "slot", "tournament", "super9"]


def policy_refusal(password: str, *, account: str | None = None) -> str | None:
    """Why ``password`` may not be used (one line), or None."""
    if len(password) < PASSWORD_MIN:
        return f"password: at least {PASSWORD_MIN} characters"
    if len(password) > PASSWORD_MAX:
        return f"password: at most {PASSWORD_MAX} characters"
    if len(set(password)) == 1:
        return "password: not one character repeated"
    known = [*_KNOWN, *((account, *account.split()) if account else ())]
    verdict = zxcvbn(password[:CHECKED], user_inputs=known)
    if verdict["score"] < MIN_SCORE:
        hint = verdict["feedback"]["warning"] or "add words or characters"
        return f"password: too easy to guess ({hint.rstrip('.')}); use a longer passphrase"
    return None
