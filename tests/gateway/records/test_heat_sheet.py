"""A heat export's HTML is a printable A4 heat sheet (issue 24 no. 6): seat, machine,
player, ID number, score with its marks (M manual, T23; A amended; DQ), the approvals
with their second person, signature lines; laid out in Chromium it fits an A4 page's
width and no ID number, machine or time breaks across lines."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest_asyncio
from playwright.async_api import Browser, Page

from gateway.records.report_html import render
from tests.browser import browser_fixture

from .heat_sheet_sample import NAMES, heat_document

A4_WIDTH_PX = 794  # 210 mm at CSS's 96 px per inch

browser = browser_fixture()


def _html(training: bool = False) -> str:
    return render(
        heat_document(training), json_name="heat-12.json", sha256="ab" * 32, public_key="KEY="
    )


def _row(html: str, seat: int) -> str:
    rows = re.findall(r"<tr>\s*<td class=\"num\">(\d+)</td>(.*?)</tr>", html, re.S)
    return str(next(body for number, body in rows if int(number) == seat))


def test_the_sheet_shows_every_seat_with_its_marks() -> None:
    html = _html()
    assert "@page { size: A4 portrait" in html
    assert "Heat sheet — Ridge Summer Slots, qualifying heat 12" in html
    assert "OFFICIAL" in html
    for name, id_number in NAMES:
        assert name in html
        assert f'<td class="nb">{id_number}</td>' in html
    assert '<td class="mark">M</td>' in _row(html, 2)  # T23: keyed by hand
    assert '<td class="mark">A</td>' in _row(html, 5)  # amended after the cut
    assert '<td class="mark">DQ</td>' in _row(html, 8)
    assert '<td class="mark"></td>' in _row(html, 1)
    assert "played by Grace Dlamini (proxy)" in _row(html, 3)
    assert "no_show" in _row(html, 4)
    # The manual score with the director who approved it; the amendment with what it was.
    manual = html[html.index("Manual scores and amendments") :]
    assert "SAS link lost at the end lock" in manual
    assert '<td class="nb">thandi</td><td class="nb">dana</td>' in manual
    assert "(was 10050)" in manual
    assert '<td class="nb">marc</td>' in manual
    assert "on the exclusion register since 1 Dec" in html
    assert html.count('<div class="line"></div>') == 4  # signature lines
    assert "Tournament Director — name, signature, date" in html
    assert "ab" * 32 in html
    assert "<script" not in html
    assert "TRAINING DATABASE" in _html(training=True)


def test_names_on_the_sheet_are_escaped() -> None:
    doc = heat_document()
    doc["body"]["seats"][0]["player"]["name"] = "<img src=x onerror=alert(1)>"
    doc["body"]["seats"][0]["played_by"] = "<img src=x onerror=alert(1)>"
    html = render(doc, json_name="heat-12.json", sha256="ab" * 32, public_key="KEY=")
    assert "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


@pytest_asyncio.fixture
async def a4(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport={"width": A4_WIDTH_PX, "height": 1123})
    page = await context.new_page()
    try:
        yield page
    finally:
        await context.close()


async def test_the_sheet_fits_an_a4_page_in_chromium(a4: Page) -> None:
    await a4.set_content(_html())
    overflow = await a4.evaluate("document.documentElement.scrollWidth")
    assert overflow <= A4_WIDTH_PX
    # No ID number, machine, time or score breaks across lines (its text is one line box)
    # or spills out of its cell.
    cells = await a4.evaluate(
        """() => [...document.querySelectorAll('table.seats td.nb, table.seats td.num')]
              .filter(td => td.textContent.trim())
              .map(td => {
                const range = document.createRange();
                range.selectNodeContents(td);
                const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
                return [td.textContent.trim(), lines.size, td.scrollWidth <= td.clientWidth];
              })"""
    )
    assert len(cells) >= 8 * 4
    broken = [text for text, lines, fits in cells if lines != 1 or not fits]
    assert broken == []
    # The long double-barrelled name wraps at its spaces, not one letter per line.
    name_width = await a4.evaluate(
        """() => [...document.querySelectorAll('table.seats td.name')]
              .map(td => td.getBoundingClientRect().width)"""
    )
    assert min(name_width) > 100
    # Printed with its own @page: A4 (595 x 842 points), eight seats on one page.
    pdf = await a4.pdf(prefer_css_page_size=True)
    boxes = re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf)
    assert [(round(float(w)), round(float(h))) for w, h in boxes] == [(595, 842)]
    assert len(re.findall(rb"/Type /Page[^s]", pdf)) == 1
