"""A heat export's document as ``export heat`` writes it (the shape of
gateway/records/heat_export.py after canonical conversion), for the heat-sheet tests
and the screenshot (docs/screens/render_export.py): eight seats, long names, a proxy, a
manual score approved by a second person (T23), an amended score, a disqualification."""

from __future__ import annotations

from typing import Any

NAMES = [
    ("Thandi Mokoena", "8001015009087"),
    ("Pieter-Jan van der Westhuizen-Bezuidenhout", "7505055123080"),
    ("Lerato Dlamini", "9202020456081"),
    ("Sipho Nkosi", "8803035111089"),
    ("Anika Pretorius", "9104040222084"),
    ("Johan van Wyk", "7706060333085"),
    ("Nomvula Khumalo-Zungu", "8507070444086"),
    ("Ahmed Patel", "9908080555087"),
]
CREDITS = [15_420, 9_880, 12_300, 0, 11_050, 7_600, 13_975, 10_400]


def _seat(i: int) -> dict[str, Any]:
    name, id_number = NAMES[i]
    number = i + 1
    score: dict[str, Any] = {
        "final_credits": CREDITS[i],
        "meters": {"games_played": 212, "games_won": 61, "credits_wagered": 2120,
                   "credits_won": CREDITS[i]},
        "source": "machine",
        "recorded_at": "2026-12-02T18:10:02+02:00",
        "recorded_by": "gateway",
    }  # fmt: skip
    seat: dict[str, Any] = {
        "seat_id": 100 + number,
        "seat_number": number,
        "machine": f"A-{number:02d}",
        "entry_id": 500 + number,
        "player": {"id": 40 + number, "name": name, "id_number": id_number},
        "played_by": name,
        "status": "present",
        "moved_to_seat_id": None,
        "score": score,
        "manual_scores": [],
        "disqualifications": [],
    }
    if number == 2:  # the link was lost: keyed by hand, a director approving (T23)
        score.update(source="manual", recorded_at="2026-12-02T18:14:40+02:00",
                     recorded_by="thandi")  # fmt: skip
        seat["manual_scores"] = [{
            "audit_id": 9001, "at": "2026-12-02T18:14:40+02:00", "by": "thandi",
            "reason": "SAS link lost at the end lock; credits read from the screen",
            "credits": CREDITS[1], "meters": None, "replaced": None,
        }]  # fmt: skip
    if number == 3:
        seat["played_by"] = "Grace Dlamini"  # a proxy (T16e)
    if number == 4:
        seat["status"] = "no_show"
        seat["score"] = None
    if number == 5:  # changed after the cut was sealed (an amendment record)
        score["amended"] = True
        seat["amendments"] = [{
            "at": "2026-12-02T19:02:00+02:00", "by": "dana", "approved_by": "marc",
            "reason": "meter photo shows 11,050, not 10,050", "credits": CREDITS[4],
            "replaced": 10_050,
        }]  # fmt: skip
    if number == 8:
        seat["disqualifications"] = [{
            "id": 3, "player_id": 48, "entry_id": None, "whole_player": True, "rule": "2",
            "reason": "on the exclusion register since 1 Dec", "decided_by": "dana",
            "decided_at": "2026-12-02T18:30:00+02:00", "revoked_at": None, "revoked_by": None,
        }]  # fmt: skip
    return seat


def heat_document(training: bool = False) -> dict[str, Any]:
    return {
        "format": "reelgate-export/1",
        "kind": "heat",
        "id": "12",
        "generated_at": "2026-12-02T19:30:00+02:00",
        "venue": "Ridge Casino",
        "training": training,
        "body": {
            "heat": {
                "id": 12,
                "tournament": {"id": 1, "name": "Ridge Summer Slots"},
                "stage": "qualifying",
                "number": 12,
                "bank": "A",
                "scheduled_start": "2026-12-02T18:00:00+02:00",
                "duration_seconds": 600,
                "starting_credits": 1000,
                "started_at": "2026-12-02T18:00:01+02:00",
                "ended_at": "2026-12-02T18:10:01+02:00",
                "status": "closed",
                "restarts": 0,
                "result": "official",
            },
            "seats": [_seat(i) for i in range(8)],
            "notices": [],
            "decisions": [
                {
                    "audit_id": 9001,
                    "at": "2026-12-02T18:14:40+02:00",
                    "actor": "thandi",
                    "action": "score.manual",
                    "subject": "seat:102",
                    "reason": "SAS link lost at the end lock; credits read from the screen",
                    "details": {
                        "credits": CREDITS[1],
                        "second_person": {
                            "account": "dana",
                            "role": "director",
                            "for": "heat.manual-score",
                        },
                    },
                },
                {
                    "audit_id": 9010,
                    "at": "2026-12-02T18:20:00+02:00",
                    "actor": "dana",
                    "action": "heat.finish",
                    "subject": "heat:12",
                    "reason": None,
                    "details": {},
                },
            ],
        },
    }
