"""The open-file limit is lifted before a bank's links are opened (a thousand machines)."""

from __future__ import annotations

import logging
import resource

import pytest

from gateway.machines.fd_room import SPARE, make_room_for


class Limits:
    def __init__(self, soft: int, hard: int, *, refuse: bool = False) -> None:
        self.soft, self.hard, self.refuse = soft, hard, refuse
        self.sets: list[tuple[int, int]] = []

    def get(self, which: int) -> tuple[int, int]:
        assert which == resource.RLIMIT_NOFILE
        return self.soft, self.hard

    def set_(self, which: int, limits: tuple[int, int]) -> None:
        assert which == resource.RLIMIT_NOFILE
        if self.refuse:
            raise ValueError("not allowed")
        self.sets.append(limits)
        self.soft, self.hard = limits


def room(limits: Limits, links: int, in_use: int = 10) -> int:
    return make_room_for(links, get=limits.get, set_=limits.set_, in_use=lambda: in_use)


def test_a_thousand_links_lift_the_usual_1024_toward_the_hard_limit() -> None:
    limits = Limits(1024, 524_288)
    assert room(limits, 1000, in_use=40) == 1000 + 40 + SPARE
    assert limits.sets == [(1000 + 40 + SPARE, 524_288)]  # the hard limit untouched


def test_enough_room_already_changes_nothing() -> None:
    limits = Limits(20_000, 20_000)
    assert room(limits, 1000) == 20_000
    assert limits.sets == []


def test_an_unlimited_soft_limit_is_left_alone() -> None:
    limits = Limits(resource.RLIM_INFINITY, resource.RLIM_INFINITY)
    assert room(limits, 5000) == resource.RLIM_INFINITY
    assert limits.sets == []


def test_an_unlimited_hard_limit_gives_exactly_what_is_needed() -> None:
    limits = Limits(256, resource.RLIM_INFINITY)
    assert room(limits, 1000, in_use=0) == 1000 + SPARE


def test_a_low_hard_limit_is_reached_and_named(caplog: pytest.LogCaptureFixture) -> None:
    limits = Limits(1024, 1100)
    with caplog.at_level(logging.WARNING, logger="gateway.machines.fd_room"):
        assert room(limits, 1000) == 1100
    assert limits.sets == [(1100, 1100)]
    assert "hard limit 1100" in caplog.text
    assert "1000 machine links" in caplog.text


def test_a_refused_lift_keeps_the_limit_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    limits = Limits(1024, 4096, refuse=True)
    with caplog.at_level(logging.WARNING, logger="gateway.machines.fd_room"):
        assert room(limits, 1000) == 1024
    assert "open-file limit stays 1024" in caplog.text
