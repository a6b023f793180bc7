"""A player faster than a real-time SAS link (SAS 6.02 §12.4): the flood the client and
the driver must hold whole (protocols.sas.client.SasEventFlood)."""

from __future__ import annotations

from emulators.sas_face import SasFace


def flood(face: SasFace, spins: int) -> None:
    """From now, one game (its bet and win events) every second poll the emulated EGM
    answers, ``spins`` games in all: its events queue as fast as polls drain them, so a
    long poll meets events only."""
    polls = played = 0

    def play(at: float) -> None:
        nonlocal polls, played
        polls += 1
        if polls % 2 and played < spins:
            played += 1
            face.machine.spin(bet=1)

    face.on_poll = play
    play(0.0)
