"""The Prizes screen's forms read into the API's own bodies (``ScheduleIn``,
``ApportionIn``, ``WeightsIn``, ``PayIn``), and the rules' refusals turned into one line
that starts with the form's field.  Places and amounts are keyed as the CLI takes them:
``PLACE=CENTS``, one a line (or separated by commas or spaces)."""

from __future__ import annotations

import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from gateway.errors import OperatorError
from gateway.web.api.director_models import ApportionIn, ScheduleIn, WeightsIn

B = TypeVar("B", bound=BaseModel)
_FORMS = {"signer": "the winner's ID or card number (or idnum:N, card:N)"}
_PAIR = re.compile(r"^(-?\d{1,12})\s*=\s*(-?\d{1,19})$")


def places(field: str, text: str) -> list[dict[str, int]]:
    """``1=500000`` per place; anything else is refused naming the field and the item."""
    out = []
    for item in (x for x in re.split(r"[\s,;]+", text.strip()) if x):
        found = _PAIR.match(item)
        if found is None:
            raise OperatorError(f"{field}: {item} is not PLACE=CENTS (e.g. 1=500000)")
        out.append({"place": int(found[1]), "cents": int(found[2])})
    return out


def cents(field: str, text: str) -> int:
    if not re.fullmatch(r"-?\d{1,19}", text):
        raise OperatorError(f"{field}: a whole number of cents (e.g. 600000 for R 6 000.00)")
    return int(text)


def weights(text: str) -> list[int]:
    items = [x for x in re.split(r"[\s,;]+", text.strip()) if x]
    if not items or not all(re.fullmatch(r"-?\d{1,9}", x) for x in items):
        raise OperatorError("weights: whole numbers for places 1, 2, ... (e.g. 50,30,20)")
    return [int(x) for x in items]


def validated(model: type[B], data: dict[str, object]) -> B:
    """The API's model on the form; its first problem as ``field: place N: why``."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = list(first["loc"])
        where = str(loc[0]) if loc else "form"
        if first["type"] == "string_pattern_mismatch":  # a regex says nothing to a desk
            why = _FORMS.get(where, "not in the expected form")
            raise OperatorError(f"{where}: {why}") from None
        rows = data.get(where)
        if len(loc) >= 2 and isinstance(loc[1], int) and isinstance(rows, list):
            row = rows[loc[1]]
            item = f"place {row['place']}" if isinstance(row, dict) else f"item {loc[1] + 1}"
            raise OperatorError(f"{where}: {item}: {first['msg']}") from None
        raise OperatorError(f"{where}: {first['msg']}") from None


def schedule_in(minimums: str, reason: str) -> ScheduleIn:
    return validated(
        ScheduleIn, {"minimums": places("minimums", minimums), "reason": reason or None}
    )


def apportion_in(surplus: str, shares: str, reason: str) -> ApportionIn:
    body = {"surplus_cents": cents("surplus_cents", surplus),
            "shares": places("shares", shares), "reason": reason}  # fmt: skip
    return validated(ApportionIn, body)


def weights_in(surplus: str, split: str, reason: str) -> WeightsIn:
    body = {"surplus_cents": cents("surplus_cents", surplus), "weights": weights(split),
            "reason": reason}  # fmt: skip
    return validated(WeightsIn, body)


def field_of(why: str, default: str) -> str:
    """A rule's refusal as one line naming the form's field it is about."""
    if "reason is required" in why:
        return f"reason: {why}"
    if "being paid" in why or "no advertised prizes to add to" in why:
        return f"stage: {why}"
    if "surplus cannot be negative" in why:
        return f"surplus_cents: {why}"
    if default == "payout":
        if "not transferable" in why or why.startswith("signer"):
            return why if why.startswith("signer") else f"signer: {why}"
        if "signature" in why:
            return f"signature: {why}"
        if "witness" in why:
            return f"witness: {why}"
        return f"place: {why}"
    return f"{default}: {why}"
