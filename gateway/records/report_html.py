"""The human-readable HTML of an export (Jinja2, one self-contained printable page:
no scripts, fonts or images fetched).  It shows the document and the SHA-256 of the
signed JSON file, and says how to verify it; the JSON file is the record."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from gateway.records import heat_sheet as sheet

TITLES = {
    "heat": "Heat record",
    "stage": "Stage record",
    "tournament": "Tournament record",
    "super9-session": "Super 9 session record",
    "cashup": "Cash-up",
}

_ENV = Environment(
    loader=PackageLoader("gateway.records", "templates"),
    autoescape=select_autoescape(["html"]),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def rands(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}R{whole:,}.{part:02d}"


def label(key: str) -> str:
    """``amount_cents`` reads "amount (R)": the value is shown in rand."""
    if key.endswith("_cents"):
        return f"{key.removesuffix('_cents').replace('_', ' ')} (R)"
    return key.replace("_", " ")


def columns(rows: list[dict[str, Any]]) -> list[str]:
    """The keys of a list of objects, in first-seen order."""
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def _result(body: dict[str, Any]) -> str | None:
    for value in body.values():
        if isinstance(value, dict) and isinstance(value.get("result"), str):
            return str(value["result"])
    found = body.get("result")
    return found if isinstance(found, str) else None


def _alert(body: dict[str, Any]) -> str | None:
    """A cash-up that does not reconcile says so at the top, before any figure."""
    recon = body.get("reconciliation")
    if isinstance(recon, dict) and recon.get("ok") is False:
        return f"NOT RECONCILED: {len(recon.get('mismatches', []))} mismatch(es), listed below"
    return None


def render(document: dict[str, Any], *, json_name: str, sha256: str, public_key: str) -> str:
    body: dict[str, Any] = document["body"]
    if document["kind"] == "heat":
        return _heat_sheet(document, json_name=json_name, sha256=sha256, public_key=public_key)
    title = f"{TITLES.get(document['kind'], document['kind'])} {document['id']}"
    return _ENV.get_template("export.html").render(
        document=document,
        title=title,
        result=_result(body),
        alert=_alert(body),
        sections=list(body.items()),
        json_name=json_name,
        sha256=sha256,
        public_key=public_key,
        rands=rands,
        label=label,
        columns=columns,
    )


def _heat_sheet(document: dict[str, Any], *, json_name: str, sha256: str, public_key: str) -> str:
    """A heat prints as an A4 heat sheet (:mod:`.heat_sheet`)."""
    body: dict[str, Any] = document["body"]
    decisions = body.get("decisions", [])
    return _ENV.get_template("heat_sheet.html").render(
        document=document,
        body=body,
        title=f"{TITLES['heat']} {document['id']}",
        json_name=json_name,
        sha256=sha256,
        public_key=public_key,
        when=sheet.when,
        minutes=sheet.minutes,
        marks=sheet.marks,
        manual_rows=lambda seats: sheet.manual_rows(seats, decisions),
        dq_rows=sheet.dq_rows,
        decision_rows=sheet.decision_rows,
    )
