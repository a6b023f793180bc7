"""The tournament form of the Tournaments screen: its fields (the JSON names of
``reelgate tournament set`` and of the API's :class:`~gateway.web.api.models.Settings`),
the rule clause each sets (docs/rules.md, *Settings and the clauses they cover*), and
how a refusal names its field.

Nothing here checks a setting: the form's text goes to the API's own model and then
to :class:`~gateway.tournament.settings.TournamentSettings` through the service; this
only turns form text into that body and a refusal into one line starting with a field.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from gateway.errors import OperatorError
from gateway.heat_formats import FormatKind
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.settings import TournamentSettings, Validity
from storage.enums import UnmarkedAtStart


@dataclass(frozen=True)
class Field:
    key: str  # the setting's JSON name, and the form field's
    label: str
    clause: str  # docs/rules.md
    hint: str
    choices: tuple[str, ...] = ()  # a select's values; none: a text or number input
    number: bool = False


FIELDS: tuple[Field, ...] = (
    Field("validity", "Entry validity", "T5b, T6a, T7b, T8a",
          "same-day: entries are valid on the day of purchase (T7/T8); 48h: for 48 hours "
          "(T5/T6)", tuple(v.value for v in Validity)),
    Field("venue_zone", "Venue time zone", "T5b, T7b, T1",
          "what “the day of purchase” and “under 18 on the day” mean"),
    Field("seat_price_cents", "Seat price (cents)", "T5a, T7a, T5c",
          "price of one seat; a one-seat package costs exactly this", number=True),
    Field("packages", "Entry packages", "T6a, T6b, T8a, T8b",
          "one a line, CODE:CENTS:SEATS[:CASINO CREDIT CENTS], as the CLI's --package; "
          "casino credit is never usable in a heat"),
    Field("minimum_age", "Minimum age", "T1", "may be raised, never below 18", number=True),
    Field("direct_final_places", "Straight to the final", "T13a, T17b",
          "top qualifying single entries that go straight to the final", number=True),
    Field("semi_final_qualifiers", "Semi-final places", "T14a, T14c",
          "the next single entries after the direct places", number=True),
    Field("top_player_excluded", "The top qualifier's other entries", "T14a",
          "true: the participant is excluded, so none of the top qualifier's other entries "
          "takes a semi-final seat; false: only the top entry is left out",
          ("true", "false")),
    Field("finalists_from_semis", "Finalists from the semi-finals", "T17a",
          "the advertised number taken from the semi-final ranking", number=True),
    Field("prize_places", "Prize places", "T19a, T15a",
          "final places that need a strict order: ties there are drawn by cards",
          number=True),
    Field("postpone_after_s", "Postpone a failed heat after (s)", "T20d, T21c",
          "the “reasonable period” before a failed heat is postponed, not restarted",
          number=True),
    Field("reschedule_notice_s", "Notice of a heat change (s)", "T10b",
          "minimum notice before a moved heat's earlier start", number=True),
    Field("unmarked_at_start", "A seat unmarked at the start", "T22b",
          "auto: forfeited only if the heat had a roll call; forfeit: always; present: it "
          "plays", tuple(u.value for u in UnmarkedAtStart)),
    Field("format", "Heat format", "F1, F2, F3",
          "timed: the time alone ends a heat (T12); games-limited: a machine is done after "
          "its games; credit-limited: once its credits are under the minimum bet; the time "
          "stays the backstop (F4)", tuple(k.value for k in FormatKind)),
    Field("games_per_seat", "Games per seat", "F2",
          "games-limited only: the games each machine plays (1 to 10000)", number=True),
    Field("minimum_bet", "Minimum bet (credits)", "F3",
          "credit-limited: a machine with fewer credits than this is done", number=True),
)  # fmt: skip
KEYS = tuple(f.key for f in FIELDS)
PERIOD = ("qualifying_starts_at", "qualifying_ends_at")  # T13: the qualifying period


def values_of(settings: TournamentSettings) -> dict[str, str]:
    """The settings as the form shows them (a template's, or the defaults)."""
    data = settings.to_json()
    out = {
        key: "" if data[key] is None else str(data[key])  # no games_per_seat: blank (F2)
        for key in KEYS
        if key not in ("packages", "top_player_excluded")
    }
    out["top_player_excluded"] = "true" if settings.top_player_excluded else "false"
    out["packages"] = "\n".join(
        f"{p.code}:{p.price_cents}:{p.seats}"
        + (f":{p.casino_credit_cents}" if p.casino_credit_cents else "")
        for p in settings.packages
    )
    return out


def settings_body(form: dict[str, str]) -> dict[str, Any]:
    """The form's settings as the API's body: every field given (a blank one is left to
    the default), the packages split as the CLI splits ``--package``."""
    body: dict[str, Any] = {k: form[k] for k in KEYS if form.get(k) and k != "packages"}
    if form.get("packages"):
        body["packages"] = _packages(form["packages"])
    return body


def _packages(text: str) -> list[dict[str, str]]:
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.strip().split(":")
        if len(parts) not in (3, 4):
            raise OperatorError(f"packages: line {number}: expected CODE:CENTS:SEATS[:CREDIT]")
        item = dict(
            zip(("code", "price_cents", "seats", "casino_credit_cents"), parts, strict=False)
        )
        out.append(item)
    return out


def moment(form: dict[str, str], key: str, zone: ZoneInfo) -> str | None:
    """A ``datetime-local`` field, read in the venue's zone, as the API's aware time."""
    text = form.get(key, "")
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).replace(tzinfo=zone).isoformat()
    except ValueError:
        raise OperatorError(f"{key}: expected a date and time, got {text[:40]!r}") from None


def named(exc: OperatorError, body: dict[str, Any]) -> str:
    """A refusal of the service as one line starting with the field it concerns."""
    why = str(exc)
    head = why.partition(":")[0]
    if head in (*KEYS, "name", *PERIOD):
        return why
    field = _field_of(exc, why, body)
    return f"{field}: {why}"


def _field_of(exc: OperatorError, why: str, body: dict[str, Any]) -> str:
    rule = exc.rule if isinstance(exc, RuleViolation) else None
    if rule == 13:
        return "qualifying_ends_at"
    if rule == 14:  # "qualifier counts must be at least 1": the one that is not
        for key in ("direct_final_places", "semi_final_qualifiers", "finalists_from_semis"):
            if str(body.get(key, "1")).strip() in ("0", "-0"):
                return key
    if rule == 20:
        return "postpone_after_s"
    for key in sorted(KEYS, key=why.find):
        if key in why:
            return key
    if "package" in why:
        return "packages"
    return "settings"
