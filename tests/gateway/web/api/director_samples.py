"""One valid request per director endpoint (heat desk, tournament desk, T15 prizes), and
the scene each needs first (:mod:`.director_scenes`), for the generated permission
tests (:mod:`.test_permissions`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from tests.gateway.web.api import director_scenes as scene
from tests.gateway.web.api.conftest import Desk

V1 = "/api/v1"
HEAT = f"{V1}/heats/{{key}}"
SEAT = f"{V1}/seats/{{key}}"
T = f"{V1}/tournaments/{{ref}}"
SPRING = f"{V1}/tournaments/Spring"
PRIZES = f"{T}/prizes/{{stage}}"
SEED = "00112233445566778899aabbccddeeff"
THANDI = "8001015009087"


def _heat(d: Desk, key: str, tail: str = "") -> str:
    return f"{V1}/heats/{d.ids[key]}{tail}"


def _seat(d: Desk, key: str, tail: str) -> str:
    return f"{V1}/seats/{d.ids[key]}{tail}"


SAMPLES: dict[tuple[str, str], Any] = {
    ("get", HEAT): lambda d: (_heat(d, "done_heat"), None),
    ("post", f"{HEAT}/reschedule"): lambda d: (
        _heat(d, "heat", "/reschedule"),
        {"starts_at": "2026-11-21T12:00:00+02:00", "announced_via": "MC", "reason": "bank move"},
    ),
    ("post", f"{HEAT}/cancel"): lambda d: (
        _heat(d, "heat", "/cancel"),
        {"announced_via": "MC", "reason": "bank A closed"},
    ),
    ("post", f"{HEAT}/postpone"): lambda d: (
        _heat(d, "heat", "/postpone"),
        {"reason": "rule 20: the bank is down"},
    ),
    ("post", f"{HEAT}/restart"): lambda d: (
        _heat(d, "due_heat", "/restart"),
        {"failed_at": "2026-11-20T09:55:00+02:00", "reason": "the gateway lost the bank"},
    ),
    ("get", f"{HEAT}/roll-call"): lambda d: (_heat(d, "heat", "/roll-call"), None),
    ("post", f"{HEAT}/roll-call"): lambda d: (
        _heat(d, "due_heat", "/roll-call"),
        {"seats": [1], "present": True},
    ),
    ("post", f"{HEAT}/begin"): lambda d: (_heat(d, "due_heat", "/begin"), {}),
    ("post", f"{HEAT}/finish"): lambda d: (_heat(d, "due_heat", "/finish"), None),
    ("post", f"{HEAT}/added-heat-draw"): lambda d: (
        _heat(d, "added_heat", "/added-heat-draw"),
        {"seed": SEED},
    ),
    ("post", f"{SEAT}/reinstate"): lambda d: (
        _seat(d, "due_seat", "/reinstate"),
        {"reason": "rule 23: the attendant missed him"},
    ),
    ("post", f"{SEAT}/malfunction"): lambda d: (
        _seat(d, "due_seat", "/malfunction"),
        {"reason": "the machine froze"},
    ),
    ("post", f"{SEAT}/proxy"): lambda d: (
        _seat(d, "semi_seat_2", "/proxy"),
        {"name": "Ben Nominee", "id_number": "8101015009086", "date_of_birth": "1981-01-01"},
    ),
    ("get", T): lambda d: (SPRING, None),
    ("post", f"{T}/decisions"): lambda d: (
        f"{SPRING}/decisions",
        {"about": "player 2", "decision": "warned", "reason": "slow play"},
    ),
    ("post", f"{T}/draws/cards"): lambda d: (
        f"{SPRING}/draws/cards",
        {
            "stage": "qualifying",
            "credits": 1500,
            "cards": [
                {"entry": d.ids["entry_thandi"], "card": "QH"},
                {
                    "entry": d.ids["spare_entry"],
                    "card": "7C",
                    "drawn_by": "public",
                    "drawer_name": "Lerato",
                },
            ],
        },
    ),
    ("post", f"{T}/draws/digital"): lambda d: (
        f"{SPRING}/draws/digital",
        {"stage": "qualifying", "credits": 1500, "seed": SEED},
    ),
    ("get", f"{T}/verify-draws"): lambda d: (f"{SPRING}/verify-draws", None),
    ("get", f"{T}/ties"): lambda d: (f"{SPRING}/ties?stage=qualifying", None),
    ("post", f"{T}/seat-draw"): lambda d: (
        f"{SPRING}/seat-draw",
        {"stage": "semi-final", "seed": SEED},
    ),
    ("post", f"{T}/expire"): lambda d: (f"{SPRING}/expire", None),
    ("get", PRIZES): lambda d: (f"{SPRING}/prizes/final", None),
    ("put", f"{PRIZES}/schedule"): lambda d: (
        f"{SPRING}/prizes/final/schedule",
        {"minimums": [{"place": 1, "cents": 500000}, {"place": 2, "cents": 200000}]},
    ),
    ("put", f"{PRIZES}/surplus"): lambda d: (
        f"{SPRING}/prizes/qualifying/surplus",
        {"surplus_cents": 1000, "shares": [{"place": 1, "cents": 1000}], "reason": "more"},
    ),
    ("put", f"{PRIZES}/surplus/weights"): lambda d: (
        f"{SPRING}/prizes/qualifying/surplus/weights",
        {"surplus_cents": 1001, "weights": [1], "reason": "more"},
    ),
    ("post", f"{PRIZES}/places/{{place}}/receipt"): lambda d: (
        f"{SPRING}/prizes/qualifying/places/1/receipt",
        {"signer": THANDI, "signature": "slip 1"},
    ),
}


async def _thandi_entry(d: Desk) -> None:
    await scene.tied_at_the_top(d)
    from storage.tournament import Seat

    async with d.sessions() as s:
        seat = await s.get(Seat, d.ids["scored_seat"])
        assert seat is not None
        d.ids["entry_thandi"] = seat.entry_id


Scene = Callable[[Desk], Awaitable[None]]
PREPARE: dict[tuple[str, str], Scene] = {
    ("post", f"{V1}/banks/{{bank}}/orders"): scene.bank_held,
    ("post", f"{HEAT}/restart"): partial(scene.due_heat, begun=True),
    ("post", f"{HEAT}/roll-call"): scene.due_heat,
    ("post", f"{HEAT}/begin"): scene.due_heat,
    ("post", f"{HEAT}/finish"): partial(scene.due_heat, begun=False),
    ("post", f"{HEAT}/added-heat-draw"): scene.waiting_for_an_added_heat,
    ("post", f"{SEAT}/reinstate"): partial(scene.due_heat, begun=False),
    ("post", f"{SEAT}/malfunction"): partial(scene.due_heat, begun=True),
    ("post", f"{SEAT}/proxy"): scene.two_semi_seats,
    ("post", f"{T}/draws/cards"): _thandi_entry,
    ("post", f"{T}/draws/digital"): scene.tied_at_the_top,
    ("post", f"{T}/seat-draw"): scene.qualifying_over_with_a_semi,
    ("post", f"{T}/expire"): scene.stale_entry,
    ("put", f"{PRIZES}/surplus"): scene.qualifying_over,
    ("put", f"{PRIZES}/surplus/weights"): scene.qualifying_over,
    ("post", f"{PRIZES}/places/{{place}}/receipt"): scene.qualifying_over,
}
