"""Defaults that both the option parsers (:mod:`gateway.app.options`) and the
configuration file (:mod:`gateway.app.configfile`) fall back on.

Below both, so the options can import the configuration's ``--config`` and the
configuration can name the same default spool without an import circle.
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_SPOOL = Path("reelgate-journal.spool")
