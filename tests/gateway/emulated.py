"""The emulated bank in its own process (``bench/bank_host.py``), for the gateway tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bank_host", ROOT / "bench" / "bank_host.py")
assert _spec is not None
assert _spec.loader is not None
bank_host = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bank_host)

BankProcess = bank_host.BankProcess
