"""Several emulated EGMs on one SAS line (a multi-drop loop behind one port).

On a real loop every EGM hears every byte the host sends, and only the addressed one
answers; the EGMs' replies go back to the host and not to each other.  A
:class:`MultiDrop` does that for one host connection: each :class:`SasFace` gets its own
tap (a carrier whose writes go to the host's carrier, and which receives every byte
the host sends), so a face cannot tell a shared loop from a line of its own -- its
:class:`~protocols.sas.link.EgmLink` already skips polls to other addresses and takes
them as implied ACKs.
"""

from __future__ import annotations

from collections.abc import Sequence

from emulators.sas_face import SasFace
from protocols.sas.carriers import Carrier


class _Tap(Carrier):
    """One EGM's view of the shared line."""

    def __init__(self, line: Carrier) -> None:
        super().__init__()
        self._line = line

    def _write(self, data: bytes) -> None:
        if not self._line.closed:
            self._line.write(data)

    def _close(self) -> None:
        pass  # an EGM leaving the loop does not cut the host's cable

    def abort(self) -> None:
        """The board behind the loop resets: the host's connection drops for every EGM."""
        abort = getattr(self._line, "abort", None)
        if callable(abort):
            abort()
        else:
            self._line.close()


class MultiDrop:
    """Attach ``faces`` (distinct addresses) to one host carrier."""

    def __init__(self, faces: Sequence[SasFace]) -> None:
        addresses = [f.address for f in faces]
        if len(set(addresses)) != len(addresses):
            raise ValueError(f"two EGMs share an address on one loop: {sorted(addresses)}")
        self.faces = list(faces)

    def attach(self, line: Carrier) -> None:
        taps = [_Tap(line) for _ in self.faces]

        def on_data(data: bytes) -> None:
            for tap in taps:
                tap._deliver(data)

        def on_lost(exc: Exception | None) -> None:
            for tap in taps:
                tap._mark_lost(exc)

        for face, tap in zip(self.faces, taps, strict=True):
            face.attach(tap)
        line.set_handlers(on_data, on_lost)
