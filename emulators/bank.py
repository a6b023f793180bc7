"""A bank of emulated slot machines served over SAS/TCP from one event loop.

Machine ``i`` listens on ``127.0.0.1:P+i``; with ``P = 0`` every machine gets a free port
from the kernel and :meth:`Bank.start` reports them.  One process serves a thousand
sockets: the faces are plain protocol callbacks (no task per connection, one lazily
re-armed timer per machine), so the loop wakes only for bytes that arrive.  The machines
share one reply outbox (:class:`~emulators.reply_outbox.ReplyOutbox`): a burst of polls (the
heat's start, LP 02 to every machine) is acted on before the replies are written, so it is
not spread out by the emulator's own socket writes (``batch_replies=False``: write each
reply at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from emulators.machine import EmulatedMachine, Identity
from emulators.multidrop import MultiDrop
from emulators.player import Players
from emulators.reply_outbox import ReplyOutbox
from emulators.sas_aft import AftSettings, RegistrationMode
from emulators.sas_face import SasFace
from emulators.sas_quirks import Quirks
from protocols.sas.carriers import Carrier, SerialCarrier, open_serial, serve_tcp

LOOPBACK = "127.0.0.1"
DEFAULT_ASSET_BASE = 1001  # machine i's asset number unless given


@dataclass(slots=True)
class BankMachine:
    index: int
    machine: EmulatedMachine
    face: SasFace
    server: asyncio.Server
    port: int

    @property
    def endpoint(self) -> str:
        return f"sas+tcp://{LOOPBACK}:{self.port}?address={self.face.address}"

    def describe(self) -> dict[str, object]:
        return {
            "machine": self.machine.machine_id,
            "endpoint": self.endpoint,
            "port": self.port,
            "address": self.face.address,
            "tournament_supported": self.machine.tournament_supported,
            "asset_number": self.face.answers.aft.settings.asset_number,
            **({"quirks": q} if (q := self.face.quirks.names()) else {}),
        }


@dataclass(slots=True)
class SerialMachine:
    """A machine on a real serial port (the EGM end of a null-modem cable)."""

    machine: EmulatedMachine
    face: SasFace
    device: str
    carrier: SerialCarrier

    def describe(self) -> dict[str, object]:
        return {
            "machine": self.machine.machine_id,
            "serial_device": self.device,
            "address": self.face.address,
            "tournament_supported": self.machine.tournament_supported,
            "asset_number": self.face.answers.aft.settings.asset_number,
            **({"quirks": q} if (q := self.face.quirks.names()) else {}),
        }


def raise_open_file_limit(wanted: int) -> None:
    """A bank of N machines needs about 2N sockets; lift the soft limit toward the hard."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


class Bank:
    """``count`` emulated machines; the last ``no_tournament_support`` of them clear LP A0
    bit 3, so a heat must run host-timed on them.

    AFT (:mod:`emulators.sas_aft`): machine ``i`` has asset number ``asset_numbers[i]``
    (default ``DEFAULT_ASSET_BASE + i``) and enforces registration and the asset number
    unless ``aft_lax``; the last ``aft_refuse`` machines refuse every registration."""

    def __init__(
        self,
        count: int,
        *,
        base_port: int = 0,
        seed: int = 0,
        no_tournament_support: int = 0,
        address: int = 1,
        name_prefix: str = "EMU",
        batch_replies: bool = True,
        enforce_gap: bool = False,
        asset_numbers: Sequence[int] | None = None,
        aft_lax: bool = False,
        aft_refuse: int = 0,
        loop_size: int = 1,
        no_real_time: int = 0,
        real_time_idle_frame: bool = True,
        quirks: Quirks | None = None,
    ) -> None:
        """``quirks``: real-EGM quirks every machine shows (:mod:`emulators.sas_quirks`).
        ``loop_size`` > 1: machines share ports, that many to a multi-drop loop at
        addresses 1..``loop_size`` (``address`` is then unused).  The last
        ``no_real_time`` machines have no real-time event reporting (silent to LP 0E).
        ``real_time_idle_frame`` False: in real-time mode a machine with nothing to
        report stays silent to a general poll (SAS 6.02 §12.6) instead of ``addr FF 00``."""
        if count < 1:
            raise ValueError("a bank needs at least one machine")
        assets = list(asset_numbers or range(DEFAULT_ASSET_BASE, DEFAULT_ASSET_BASE + count))
        if len(assets) != count:
            raise ValueError(f"asset numbers: {len(assets)} given for {count} machines")
        if any(not 1 <= a <= 0xFFFFFFFF for a in assets) or len(set(assets)) != count:
            raise ValueError("asset numbers must be distinct, 1..4294967295")
        if not 0 <= aft_refuse <= count:
            raise ValueError(f"--aft-refuse must be 0..{count}")
        if not 0 <= no_tournament_support <= count:
            raise ValueError(f"--no-tournament-support must be 0..{count}")
        if not 0 <= no_real_time <= count:
            raise ValueError(f"--no-real-time must be 0..{count}")
        if base_port and not 1024 <= base_port <= 65535 - (count - 1):
            raise ValueError(f"base port {base_port} + {count} machines leaves 1024..65535")
        if not 1 <= address <= 127:
            raise ValueError("SAS address must be 1..127")
        if not 1 <= loop_size <= 127:
            raise ValueError("a SAS loop holds 1..127 machines")
        self.count = count
        self.base_port = base_port
        self.seed = seed
        self.no_tournament_support = no_tournament_support
        self.address = address
        self.name_prefix = name_prefix
        self.batch_replies = batch_replies
        self.enforce_gap = enforce_gap  # SAS 5 ms inter-byte gap rule on every face
        self.asset_numbers = assets
        self.aft_lax = aft_lax
        self.aft_refuse = aft_refuse
        self.loop_size = loop_size
        self.no_real_time = no_real_time
        self.real_time_idle_frame = real_time_idle_frame
        self.quirks = quirks
        self.machines: list[BankMachine] = []
        self.serial_machines: list[SerialMachine] = []
        self.players: Players | None = None
        self._players_task: asyncio.Task[None] | None = None
        self.outbox: ReplyOutbox | None = None

    async def start(self) -> list[BankMachine]:
        raise_open_file_limit(4 * self.count + 256)
        if self.batch_replies:
            self.outbox = ReplyOutbox(asyncio.get_running_loop())
        width = max(3, len(str(self.count)))
        try:
            for first in range(0, self.count, self.loop_size):
                await self._start_loop(range(first, min(first + self.loop_size, self.count)), width)
        except BaseException:
            await self.close()
            raise
        return self.machines

    def _aft_settings(self, i: int) -> AftSettings:
        refuses = i >= self.count - self.aft_refuse
        return AftSettings(
            asset_number=self.asset_numbers[i],
            lax=self.aft_lax,
            registration=RegistrationMode.REFUSE if refuses else RegistrationMode.ACCEPT,
        )

    async def _start_loop(self, indices: range, width: int) -> None:
        """Machines ``indices`` behind one port: a loop of their own, or one machine."""
        faces: list[tuple[int, EmulatedMachine, SasFace]] = []
        for n, i in enumerate(indices):
            machine_id = f"{self.name_prefix}-{i + 1:0{width}d}"
            machine = EmulatedMachine(
                machine_id,
                seed=self.seed * 1_000_003 + i,
                tournament_supported=i < self.count - self.no_tournament_support,
                identity=Identity(serial_number=f"{machine_id}-{self.seed}"),
            )
            address = n + 1 if self.loop_size > 1 else self.address
            face = SasFace(
                machine,
                address,
                outbox=self.outbox,
                enforce_gap=self.enforce_gap,
                aft=self._aft_settings(i),
                real_time=i < self.count - self.no_real_time,
                real_time_idle_frame=self.real_time_idle_frame,
                quirks=self.quirks,
            )
            faces.append((i, machine, face))
        port = self.base_port + indices[0] // self.loop_size if self.base_port else 0
        if len(faces) == 1:
            attach = _attacher(faces[0][2])
        else:
            attach = MultiDrop([f for _, _, f in faces]).attach
        server = await serve_tcp(LOOPBACK, port, attach)
        bound = server.sockets[0].getsockname()[1]
        for i, machine, face in faces:
            self.machines.append(BankMachine(i, machine, face, server, bound))

    async def serve_serial(self, device: str) -> SerialMachine:
        """One more machine, answering on serial port ``device`` (MARK/SPACE parity and
        PARMRK set up by the serial carrier).  The host uses the cable's other end."""
        n = len(self.serial_machines) + 1
        machine_id = f"{self.name_prefix}-S{n:02d}"
        machine = EmulatedMachine(
            machine_id,
            seed=self.seed * 1_000_003 + 900_000 + n,
            identity=Identity(serial_number=f"{machine_id}-{self.seed}"),
        )
        # Serial machines follow the bank's: asset numbers past every TCP machine's.
        asset = max(self.asset_numbers) + n
        aft = AftSettings(asset_number=asset, lax=self.aft_lax)
        face = SasFace(
            machine, self.address, enforce_gap=self.enforce_gap, aft=aft, quirks=self.quirks
        )
        carrier = await open_serial(device)
        face.attach(carrier)
        entry = SerialMachine(machine, face, device, carrier)
        self.serial_machines.append(entry)
        return entry

    def start_players(self, *, seed: int = 0, pace: float = 2.5, bet: int = 1) -> Players:
        """Simulated players pressing spin wherever play is enabled."""
        machines = [b.machine for b in self.machines] + [s.machine for s in self.serial_machines]
        players = Players(machines, seed=seed, pace=pace, bet=bet)
        self.players = players
        self._players_task = asyncio.get_running_loop().create_task(players.run())
        return players

    async def close(self) -> None:
        if self._players_task is not None:
            self._players_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._players_task
            self._players_task = None
        if self.outbox is not None:
            self.outbox.close()
        for b in self.machines:
            b.server.close()
            b.face.close()
        for b in self.machines:
            await b.server.wait_closed()
        for s in self.serial_machines:
            s.face.close()
            await s.carrier.aclose()
        self.machines.clear()
        self.serial_machines.clear()

    async def __aenter__(self) -> Bank:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def _attacher(face: SasFace) -> Callable[[Carrier], None]:
    def on_connection(carrier: Carrier) -> None:
        face.attach(carrier)

    return on_connection
