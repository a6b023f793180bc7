"""Render the heat sheet of a signed heat export into ``docs/screens/export-heat-sheet.png``.

    PYTHONPATH=. python docs/screens/render_export.py [--out docs/screens] [--chromium PATH]

Writes a heat export (the sample heat of tests/gateway/records/heat_sheet_sample.py:
eight seats, a manual score, an amendment, a proxy, a disqualification) with a throwaway
venue key, as ``reelgate export heat`` does, and photographs its HTML in Debian's
chromium at A4 width (794 CSS px), whole page.  Nothing is fetched.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402

from gateway.records.exporter import write_export  # noqa: E402
from tests.gateway.records.heat_sheet_sample import heat_document  # noqa: E402

A4_WIDTH_PX = 794


async def render(out: Path, chromium: str) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        files = write_export(heat_document(), Path(tmp), Ed25519PrivateKey.generate())
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            try:
                page = await browser.new_page(viewport={"width": A4_WIDTH_PX, "height": 1123})
                await page.goto(files.html.as_uri())
                target = out / "export-heat-sheet.png"
                await page.screenshot(path=str(target), full_page=True)
            finally:
                await browser.close()
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screens")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    print(asyncio.run(render(args.out, args.chromium)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
