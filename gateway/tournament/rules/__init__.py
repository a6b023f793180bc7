"""Pure tournament rules: no database, no clock (time is passed in), frozen values.

One module per part of the rules sheet: ``eligibility`` / ``exclusion_csv`` (T1–T4),
``purchases`` (5–9), ``seating`` (9–11, 16, 20–22), ``ranking`` (12–14, 17, 19), ``cards``
(19), ``final_stages`` (14, 16, 21), ``incidents`` (20–21), ``attendance`` (22 roll
call); ``hotseat``, the house's hot-seat draws and wild cards (HS1–HS7, not on the sheet).
Every refusal is a :class:`RuleViolation` whose message starts with the rule number.
"""

from gateway.tournament.rules.violations import RuleViolation

__all__ = ["RuleViolation"]
