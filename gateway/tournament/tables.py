"""The tournament settings the ``tournaments`` row has no column for.

``tournaments`` (``storage.tournament``) holds the venue zone, seat price, validity mode,
semi-final size, direct final places, final quota and minimum age; this one row per
tournament holds the rest of :class:`~gateway.tournament.settings.TournamentSettings`
(the package list of rules 6/8, prize places for rule 19, the rule 20 "reasonable
period" and the rule 10 notice) as canonical JSON.
"""

from __future__ import annotations

from sqlalchemy import ForeignKey, Text
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base


class TournamentRuleSettings(Base):
    __tablename__ = "tournament_rule_settings"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    settings_json: Mapped[str] = mapped_column(Text)
