"""The one error the rules raise: a refused action naming the rule that refuses it."""

from __future__ import annotations

from gateway.errors import OperatorError


class RuleViolation(OperatorError):
    """An action the tournament rules forbid.

    ``rule`` is the number on the rules sheet (``None`` for plain field errors); the
    message starts with ``rule N:`` so the operator sees which rule refused it.
    """

    def __init__(self, rule: int | None, message: str) -> None:
        self.rule = rule
        super().__init__(f"rule {rule}: {message}" if rule is not None else message)
