"""A machine link's retries: the first try runs bare, a transient failure is retried."""

from __future__ import annotations

import pytest

from gateway.machines.driver import LinkDown, LinkTimeout, MachineRefused
from gateway.machines.links import MachineLink


class Flaky:
    """A driver whose ``read`` fails with the queued errors first, then answers."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.log: list[str] = []

    async def open(self) -> None:
        self.log.append("open")

    async def close(self) -> None:
        self.log.append("close")

    async def read(self) -> int:
        self.log.append("read")
        if self.errors:
            raise self.errors.pop(0)
        return 7


def link(driver: Flaky, attempts: int = 3, budget_s: float = 5.0) -> MachineLink:
    made = MachineLink("A01", driver, attempts=attempts, budget_s=budget_s, first_wait_s=0.001)  # type: ignore[arg-type]
    made.opened = True
    return made


async def test_an_answer_at_once_is_one_call() -> None:
    d = Flaky()
    assert await link(d).call(d.read) == 7
    assert d.log == ["read"]


async def test_a_timeout_is_retried_until_the_answer() -> None:
    d = Flaky(LinkTimeout("no reply"), LinkTimeout("no reply"))
    assert await link(d).call(d.read) == 7
    assert d.log == ["read", "read", "read"]


async def test_a_dropped_connection_is_reopened_before_the_next_try() -> None:
    d = Flaky(LinkDown("closed"), LinkDown("closed"))
    assert await link(d).call(d.read) == 7
    assert d.log == ["read", "close", "open", "read", "close", "open", "read"]


async def test_the_attempts_are_counted_from_the_first_try() -> None:
    d = Flaky(*(LinkTimeout(f"no reply {i}") for i in range(5)))
    with pytest.raises(LinkTimeout, match="no reply 2"):
        await link(d, attempts=3).call(d.read)
    assert d.log.count("read") == 3


async def test_one_attempt_means_no_retry() -> None:
    d = Flaky(LinkTimeout("no reply"))
    with pytest.raises(LinkTimeout):
        await link(d, attempts=1).call(d.read)
    assert d.log == ["read"]


async def test_a_spent_budget_stops_after_the_first_try() -> None:
    d = Flaky(LinkDown("closed"))
    with pytest.raises(LinkDown):
        await link(d, budget_s=0.0).call(d.read)
    assert d.log == ["read"]  # not even closed: nothing more will be tried


async def test_a_refusal_is_never_retried() -> None:
    d = Flaky(MachineRefused("unsupported"))
    with pytest.raises(MachineRefused):
        await link(d).call(d.read)
    assert d.log == ["read"]
