"""Several emulated EGMs on one SAS line (a multi-drop loop behind one port).

On a real loop every EGM hears every byte the host sends, and only the addressed one
answers; the EGMs' replies go back to the host and not to each other.  A
:class:`MultiDrop` does that for one host connection: each :class:`SasFace` gets its own
tap (a carrier whose writes go to the host's carrier, and which receives every byte
the host sends to it), so a face cannot tell a shared loop from a line of its own.

Routing instead of broadcasting every byte: a real loop's EGMs each parse every byte in
their own hardware, but one process emulating 127 of them must not parse every byte
127 times.  What another EGM's poll means to an EGM is only its first byte -- an
address that is not its own, an implied ACK of its last reply -- so each host message
goes whole to the EGM it addresses, its first (wakeup) byte alone to the EGM addressed
before it (the only one holding an unacknowledged reply), and broadcasts (address 0) to
every EGM.  Each :class:`~protocols.sas.link.EgmLink` sees exactly what it would act on
from the whole stream.
"""

from __future__ import annotations

from collections.abc import Sequence

from emulators.sas_face import SasFace
from protocols.sas.carriers import Carrier
from protocols.sas.wire import Chunk, StreamDecoder, escape


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
        taps = {face.address: _Tap(line) for face in self.faces}
        router = _Router(taps)
        for face in self.faces:
            face.attach(taps[face.address])
        line.set_handlers(router.on_data, router.on_lost)


class _Router:
    """Host bytes to the taps that need them (see the module doc)."""

    def __init__(self, taps: dict[int, _Tap]) -> None:
        self.taps = taps
        self.decoder = StreamDecoder()
        self.target: int | None = None  # whose message the bytes now belong to (0: all)

    def on_data(self, data: bytes) -> None:
        taps = self.taps
        for ev in self.decoder.feed_chunks(data):
            if not isinstance(ev, Chunk):
                self._deliver(ev.raw)  # a bad escape: the addressed EGM sees the garbage
                continue
            if not ev.wakeup:
                self._deliver(escape(ev.data, wakeup=False))
                continue
            first = ev.data[:1]
            address = first[0] & 0x7F
            before, self.target = self.target, address
            if address and before and before != address and before in taps:
                taps[before]._deliver(escape(first))  # its implied ACK
            self._deliver(escape(ev.data))

    def _deliver(self, wire: bytes) -> None:
        target = self.target
        if target == 0:
            for tap in self.taps.values():
                tap._deliver(wire)
        elif target is not None and target in self.taps:
            self.taps[target]._deliver(wire)

    def on_lost(self, exc: Exception | None) -> None:
        for tap in self.taps.values():
            tap._mark_lost(exc)
