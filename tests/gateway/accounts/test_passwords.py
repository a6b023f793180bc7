"""The password policy (issue 25.3): long enough, not one character repeated, not easy to
guess by zxcvbn's lists (shipped in the package); one line naming the rule."""

from __future__ import annotations

import pytest

from gateway.accounts.passwords import PASSWORD_MAX, PASSWORD_MIN, policy_refusal


@pytest.mark.parametrize(
    ("password", "rule"),
    [
        ("short", f"at least {PASSWORD_MIN} characters"),
        ("a" * (PASSWORD_MAX + 1), f"at most {PASSWORD_MAX} characters"),
        ("aaaaaaaaaa", "not one character repeated"),  # accepted before
        ("password123", "too easy to guess"),
        ("Password1!", "too easy to guess"),
        ("qwertyuiop", "too easy to guess"),
        ("1234567890", "too easy to guess"),
        ("abcabcabcabc", "too easy to guess"),
    ],
)
def test_weak_passwords_are_refused_naming_the_rule(password: str, rule: str) -> None:
    why = policy_refusal(password)
    assert why is not None
    assert why.startswith("password: ")
    assert rule in why
    assert "\n" not in why


def test_the_account_name_is_no_secret() -> None:
    assert policy_refusal("thandi mokoena1", account="thandi mokoena") is not None
    assert policy_refusal("reelgate2026!", account="desk") is not None


@pytest.mark.parametrize(
    "password", ["correct horse battery", "bench console 1", "s3cret-board", "x" * 5 + "Q9!vT2#m"]
)
def test_a_passphrase_passes(password: str) -> None:
    assert policy_refusal(password) is None


def test_a_very_long_password_is_judged_by_its_start() -> None:
    assert policy_refusal("correct horse battery " * 40) is None
