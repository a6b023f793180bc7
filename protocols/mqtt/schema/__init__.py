"""The published JSON Schema of the MQTT board protocol (``v1.json``), shipped as data."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def load(version: int = 1) -> dict[str, Any]:
    text = resources.files(__name__).joinpath(f"v{version}.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data
