"""The printable HTML of an export (a heat has its own sheet: test_heat_sheet.py):
banners for a training database, a provisional result and a cash-up that does not
reconcile; names are escaped; money in rand."""

from __future__ import annotations

from typing import Any

from gateway.records.report_html import rands, render


def _doc(body: dict[str, Any], training: bool = False) -> dict[str, Any]:
    return {"format": "reelgate-export/1", "kind": "stage", "id": "3",
            "generated_at": "2026-12-02T19:00:00+02:00", "venue": "Ridge",
            "training": training, "body": body}  # fmt: skip


def _html(doc: dict[str, Any]) -> str:
    return render(doc, json_name="heat-3.json", sha256="ab" * 32, public_key="KEY=")


def test_training_and_provisional_banners() -> None:
    html = _html(_doc({"heat": {"result": "provisional"}}, training=True))
    assert "TRAINING DATABASE — NOT A RECORD OF REAL PLAY OR MONEY" in html
    assert "PROVISIONAL — not final" in html
    assert "ab" * 32 in html
    assert "TRAINING" not in _html(_doc({"heat": {"result": "official"}}))


def test_a_cashup_that_does_not_reconcile_says_so_first() -> None:
    html = _html(_doc({"reconciliation": {"ok": False, "mismatches": ["purchase 1: ..."]}}))
    assert html.index("NOT RECONCILED: 1 mismatch(es)") < html.index("purchase 1: ...")


def test_names_are_escaped_and_money_is_in_rand() -> None:
    html = _html(_doc({"seats": [{"player": "<script>x</script>", "amount_cents": 123456}]}))
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "R1,234.56" in html
    assert "amount (R)" in html
    assert rands(-5) == "-R0.05"
