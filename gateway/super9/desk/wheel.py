"""Connects a wheel feed to a drawing session: every debounced result becomes a spin.

The link is retried with back-off (a wheel's serial converter or terminal server may
drop); the debouncer lives across reconnects, so a game posted before a drop is not
posted again when the wheel repeats it after.  The loop ends when the session stops
drawing (closed), when ``max_results`` is reached, or after ``max_attempts`` connection
attempts — every loop is bounded.  A session that is not drawing, a bad URL and a link
that cannot be (re)established are each one :class:`OperatorError` line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from gateway.errors import OperatorError
from gateway.super9.desk import SpinRecorded, Super9Desk
from protocols.wheel import Debouncer, open_wheel, parse_wheel_url, read_results


@dataclass
class WheelRun:
    results: list[SpinRecorded] = field(default_factory=list)
    debouncer: Debouncer = field(default_factory=Debouncer)
    connections: int = 0
    stopped_because: str = ""


class LinkLost(ConnectionError):
    """The wheel link closed while the session was still drawing."""


async def follow_wheel(
    desk: Super9Desk,
    session_id: int,
    url: str,
    *,
    clock: Callable[[], datetime],
    max_results: int | None = None,
    max_attempts: int = 10,
    on_spin: Callable[[SpinRecorded], None] | None = None,
    debouncer: Debouncer | None = None,
) -> WheelRun:
    try:
        parse_wheel_url(url)
    except ValueError as exc:
        raise OperatorError(str(exc)) from None
    await desk.require_drawing(session_id)  # before touching the wheel link
    run = WheelRun() if debouncer is None else WheelRun(debouncer=debouncer)

    async def once() -> None:
        link = await open_wheel(url)
        run.connections += 1
        try:
            async for result in read_results(link.reader, run.debouncer):
                try:
                    spin = await desk.record_result(
                        session_id, result.game, result.number, now=clock()
                    )
                except OperatorError as exc:  # the session stopped drawing
                    run.stopped_because = str(exc)
                    return
                if spin is not None:
                    run.results.append(spin)
                    if on_spin is not None:
                        on_spin(spin)
                if max_results is not None and len(run.results) >= max_results:
                    run.stopped_because = f"{max_results} results"
                    return
        finally:
            await link.close()
        raise LinkLost("wheel link closed")

    try:
        async for attempt in AsyncRetrying(
            stop=stop_after_attempt(max_attempts),
            wait=wait_exponential(multiplier=0.2, max=5),
            retry=retry_if_exception_type((ConnectionError, OSError)),
            reraise=True,
        ):
            with attempt:
                await once()
    except (ConnectionError, OSError) as exc:
        # Spins already recorded stay recorded; the operator reconnects or keys by hand.
        why = str(exc) or type(exc).__name__
        raise OperatorError(
            f"wheel {url}: link lost or refused after {run.connections} connection(s) "
            f"and {max_attempts} attempt(s): {why}; rule 29 manual spins remain available"
        ) from None
    return run
