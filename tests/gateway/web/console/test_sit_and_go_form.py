"""The console's schedule form takes a sit-and-go heat (house clause F6,
docs/rules.md#f6): the seats in ``sit_and_go_seats``, blank for a fixed start; a bad
count is one line naming the field (422) and changes nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from storage.tournament import Heat, SitAndGoHeat

from .conftest import Desk, signed_in
from .test_schedule import NEW, PATH, _form


async def _count(desk: Desk) -> tuple[int, int]:
    async with desk.sessions() as s:
        heats = await s.scalar(select(func.count()).select_from(Heat)) or 0
        sit = await s.scalar(select(func.count()).select_from(SitAndGoHeat)) or 0
        return heats, sit


async def test_f6_the_schedule_form_takes_a_sit_and_go_heat(desk: Desk) -> None:
    async with signed_in(desk, "director") as client:
        page = await client.get(PATH)
        assert 'name="sit_and_go_seats"' in page.text
        form = {**NEW, "tournament": "Spring", "sit_and_go_seats": "2"}
        r = await _form(client, f"{PATH}/heats", form)
    assert r.status_code == 303, r.text
    async with desk.sessions() as s:
        rows = (await s.scalars(select(SitAndGoHeat))).all()
    assert [row.seats for row in rows] == [2]


@pytest.mark.parametrize(
    ("seats", "line"),
    [
        ("two", "sit_and_go_seats: whole seats, or blank for a fixed start"),
        ("99", "sit_and_go_seats: rule F6: sit_and_go_seats must be 1 to"),
    ],
)
async def test_f6_a_bad_seat_count_changes_nothing(desk: Desk, seats: str, line: str) -> None:
    before = await _count(desk)
    async with signed_in(desk, "director") as client:
        form = {**NEW, "tournament": "Spring", "sit_and_go_seats": seats}
        r = await _form(client, f"{PATH}/heats", form)
    assert r.status_code == 422, r.text
    assert line in r.text
    assert await _count(desk) == before
