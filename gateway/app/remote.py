"""``--server URL``: a CLI write sent to the API (``/api/v1``) with a token.

The token comes from ``$REELGATE_TOKEN`` or ``--token-file FILE`` — never an argument
value, which any user of the host could read in the process list.  The API records the
change under the token's account and at its own clock, so ``--now``, ``--director`` and
a second person's account are refused here: a dual-control request becomes a pending
action that a second account approves through the API.  Commands the API does not
cover say so in one line (:func:`refuse_uncovered`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import httpx

from gateway.app.output import emit
from gateway.app.tenders import sale_tender
from gateway.errors import OperatorError

TOKEN_ENV = "REELGATE_TOKEN"
TIMEOUT_S = 15.0
PREFIX = "/api/v1"


def token_of(args: argparse.Namespace) -> str:
    path = getattr(args, "token_file", None)
    if path:
        try:
            text = Path(path).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise OperatorError(f"--token-file {path}: cannot read ({exc})") from None
        if not text:
            raise OperatorError(f"--token-file {path}: the file is empty")
        return text
    found = os.environ.get(TOKEN_ENV, "").strip()
    if not found:
        raise OperatorError(f"--server: no token; set ${TOKEN_ENV} or give --token-file FILE")
    return found


def _check_remote_options(args: argparse.Namespace) -> None:
    if getattr(args, "now", None):
        raise OperatorError(
            "--now: the API records its own clock; key a back-dated write on the gateway "
            "host without --server"
        )
    if getattr(args, "director", None):
        raise OperatorError("--director: not over --server (the API takes no keyed time)")
    if getattr(args, "as_account", None):
        raise OperatorError(
            "--as: over --server the token's account is the first person; nothing sent"
        )
    spec = getattr(args, "second_person", None)
    if spec is not None and getattr(args, spec.dest, None):
        raise OperatorError(
            f"{spec.option}: over --server the second person approves the pending action "
            "with their own login or token"
        )


def _error_of(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}"
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return str(body["error"])
    return f"HTTP {response.status_code}"


def call(
    args: argparse.Namespace,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    *,
    params: dict[str, str | int] | None = None,
) -> Any:
    """Send one request; the JSON answer, or the API's refusal as one line."""
    _check_remote_options(args)
    token = token_of(args)
    base = str(args.server).rstrip("/").removesuffix(PREFIX)  # the root or its /api/v1
    try:
        with httpx.Client(base_url=base, timeout=TIMEOUT_S) as client:
            response = client.request(
                method,
                PREFIX + path,
                json=body,
                params=params,
                headers={"Authorization": f"Bearer {token}"},
            )
    except httpx.InvalidURL as exc:
        raise OperatorError(f"--server {base}: not a URL ({exc})") from None
    except httpx.HTTPError as exc:
        raise OperatorError(f"--server {base}: cannot reach the API ({exc})") from None
    if response.status_code >= 400:
        raise OperatorError(f"--server: {_error_of(response)}")
    return response.json()


def _out(args: argparse.Namespace, data: Any) -> int:
    if isinstance(data, dict) and data.get("status") == "pending":
        data = {**data, "note": "dual control: a second account approves "
                f"POST {PREFIX}/pending/{data['pending']}/approve"}  # fmt: skip
    return emit(args, data)


def remote_sell(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {
        "player": args.player,
        "package": args.package,
        "quantity": args.quantity,
        "tender": sale_tender(args).value,
    }
    if args.reference:
        body["reference"] = args.reference
    return _out(args, call(args, "POST", f"/tournaments/{args.tournament}/entries", body))


def remote_refund(args: argparse.Namespace) -> int:
    body = {"rule": args.rule, "reason": args.reason}
    if args.tender:
        body["tender"] = args.tender
    return _out(args, call(args, "POST", f"/entries/{args.entry}/refund", body))


def remote_register(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"player": args.player}
    if args.entry is not None:
        body["entry"] = args.entry
    return _out(args, call(args, "POST", f"/heats/{args.heat}/seats", body))


def remote_score(args: argparse.Namespace) -> int:
    body = {
        "credits": args.credits,
        "games_played": args.games_played,
        "games_won": args.games_won,
        "credits_wagered": args.wagered,
        "credits_won": args.won,
        "reason": args.reason,
    }
    return _out(args, call(args, "POST", f"/seats/{args.seat}/manual-score", body))


def remote_add_player(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {
        "id_number": args.id_number,
        "name": args.name,
        "date_of_birth": args.dob,
    }
    if args.card:
        body["card_number"] = args.card
    return _out(args, call(args, "POST", "/players", body))


def refuse_uncovered(args: argparse.Namespace) -> OperatorError:
    words = [str(args.command)] + [
        str(v) for k, v in sorted(vars(args).items()) if k.endswith("_action") and v
    ]
    return OperatorError(
        f"--server: reelgate {' '.join(words)} is not available through the API; "
        "run it on the gateway host without --server"
    )
