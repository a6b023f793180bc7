"""An emulated bank in its own process, for gateway tests and benchmarks.

Serves ``--machines`` emulated EGMs over SAS/TCP on loopback (``emulators.bank``), so the
gateway under test can be SIGKILLed while the machines live on, exactly as on a floor.
It prints one JSON line ``{"ready": true, "machines": [...]}`` with each endpoint, then
answers one JSON line per command read from stdin:

    state              every machine: tournament mode, locks, credits
    unlocks            machine-side times (monotonic s) each machine enabled play
    spacing            the shortest gap (s) between two polls to one machine, per machine,
                       since the previous ``spacing`` (then starts a new window); taken
                       on the machine's side, when each poll arrived
    fault ID KIND      KIND = no_reply | drop | clear
    corrupt ID N       the next N data replies of machine ID get a wrong CRC
    flip ID RATE [SEED]  flip one bit in RATE (0..1) of machine ID's reply bytes (seeded)
    credits            per machine, [machine-clock time, credit meter] of every change
                       since the previous ``credits`` or ``credit-log`` (then forgets them)
    credit-log         the same changes as one list of [machine, credit meter, time]
    exits              per machine, the credit meter it had when it last left tournament
                       mode (taken on the machine's side, as it left), then forgets them
    bill ID CREDITS    a player inserts a bill (cashable credits on the meter)
    door ID open|close the slot door
    players on|off     simulated players pressing spin wherever play is enabled
    aft ID MODE        machine ID's AFT: accept | refuse | await-ack (registration),
                       ack (the attendant acknowledges), lax | strict, unregister,
                       asset N (a new asset number), registration (its state)
    quit

The unlock times are taken by the machine model itself (its PLAY_ENABLED event, on the
machine's clock) the moment it processes the SAS startup poll: the benchmark's start
skew is the spread of those times, i.e. what the players see, not what the host sent.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a fresh clone

from emulators.bank import Bank
from emulators.machine import Event, ModelEvent
from emulators.sas_aft import RegistrationMode
from protocols.sas import AftRegister, AftRegistrationCode

AFT_KEY = "52656c6567617465" + "00" * 8 + "41465431"  # the test floor's AFT key (hex)
AFT_POS_ID = 7001

_METER_EVENTS = frozenset({Event.CREDITS_CHANGED, Event.GAME_STARTED, Event.GAME_ENDED})

# A tournament game moves the credit meter at its start (the bet) and its end (the win).


class Host:
    def __init__(self, bank: Bank) -> None:
        self.bank = bank
        self.unlock_times: dict[str, list[float]] = {}
        self.last_poll: dict[str, float] = {}
        self.min_gap: dict[str, float] = {}
        self.exit_credits: dict[str, int] = {}
        # One log of every credit change, (machine, credit meter, machine clock =
        # monotonic s): where a change's path to a screen starts (bench/console.py and
        # bench/signage.py read it, each read forgetting what it returned).
        self.credit_log: list[tuple[str, int, float]] = []
        self.last_credits: dict[str, int] = {}
        for b in bank.machines:
            mid = b.machine.machine_id
            self.unlock_times[mid] = []
            b.machine.subscribe(self._listener(mid, b.machine))
            b.face.on_poll = self._poll_watch(mid)
            self._watch_exits(b.machine)

    def _watch_exits(self, machine: Any) -> None:
        """Note the tournament credits a machine holds as it leaves tournament mode: the
        machine's own account of the score, for chaos checks against what was stored."""
        original = machine.exit_tournament

        def exit_tournament() -> None:
            credits = machine.tournament.credits if machine.tournament is not None else None
            original()  # may refuse (a game in progress): then nothing is noted
            if credits is not None:
                self.exit_credits[machine.machine_id] = credits

        machine.exit_tournament = exit_tournament

    def _poll_watch(self, machine_id: str) -> Any:
        def on_poll(at: float) -> None:
            last = self.last_poll.get(machine_id)
            if last is not None:
                gap = at - last
                if gap < self.min_gap.get(machine_id, float("inf")):
                    self.min_gap[machine_id] = gap
            self.last_poll[machine_id] = at

        return on_poll

    def _listener(self, machine_id: str, machine: Any) -> Any:
        times = self.unlock_times[machine_id]
        last = self.last_credits

        def on_event(note: ModelEvent) -> None:
            if note.event is Event.PLAY_ENABLED:
                times.append(note.at)
            elif note.event in _METER_EVENTS and len(self.credit_log) < 1_000_000:
                # A spin takes the bet at the press and adds the win at the game's end.
                credits = machine.credits
                if last.get(machine_id) != credits:
                    last[machine_id] = credits
                    self.credit_log.append((machine_id, credits, note.at))

        return on_event

    def state(self) -> dict[str, Any]:
        out = []
        for b in self.bank.machines:
            m = b.machine
            out.append(
                {
                    "id": m.machine_id,
                    "in_tournament": m.in_tournament,
                    "play_locked": m.play_locked,
                    "play_enabled": m.play_enabled(),
                    "credits": m.credits,
                    "cashable": m.cashable_credits,
                    "restricted": m.restricted_credits,
                    "tournament_supported": m.tournament_supported,
                }
            )
        return {"machines": out}

    def _face(self, machine_id: str) -> Any:
        return next(
            (b.face for b in self.bank.machines if b.machine.machine_id == machine_id), None
        )

    def _chaos(self, words: list[str]) -> dict[str, Any] | None:
        """The chaos suite's commands (``exits``, ``corrupt``, ``flip``, ``players off``);
        None for any other command."""
        cmd = words[0]
        if cmd == "exits":
            exits, self.exit_credits = self.exit_credits, {}
            return {"exits": exits}
        if cmd == "players" and words[1:] == ["off"]:
            task = self.bank._players_task
            if task is not None:
                task.cancel()
                self.bank._players_task, self.bank.players = None, None
            return {"ok": True}
        if cmd not in ("corrupt", "flip") or len(words) not in (3, 4):
            return None
        face = self._face(words[1])
        if face is None:
            return {"error": f"no machine {words[1]}"}
        if cmd == "corrupt":
            face.inject(corrupt_crc=int(words[2]))
        else:
            face.faults.flip_seed = int(words[3]) if len(words) == 4 else 0
            face.faults._flips = None  # a new seed: a new stream
            face.faults.flip_rate = float(words[2])
        return {"ok": True}

    def _fault(self, machine_id: str, kind: str) -> dict[str, Any]:
        face = self._face(machine_id)
        if face is None:
            return {"error": f"no machine {machine_id}"}
        if kind == "no_reply":
            face.faults.no_reply = True
        elif kind == "drop":
            face.drop_connection()
        elif kind == "clear":
            face.clear_faults()
        else:
            return {"error": f"unknown fault {kind}"}
        return {"ok": True}

    def _aft(self, machine_id: str, words: list[str]) -> dict[str, Any]:
        face = self._face(machine_id)
        if face is None:
            return {"error": f"no machine {machine_id}"}
        aft = face.answers.aft
        mode = words[0]
        acknowledged = False
        if mode in {m.value for m in RegistrationMode}:
            aft.settings.registration = RegistrationMode(mode)
        elif mode == "ack":
            acknowledged = aft.acknowledge()
        elif mode in ("lax", "strict"):
            aft.settings.lax = mode == "lax"
        elif mode == "unregister":
            aft.register(AftRegister(face.address, AftRegistrationCode.UNREGISTER))
        elif mode == "asset" and len(words) == 2:
            aft.settings.asset_number = int(words[1])
        elif mode != "registration":
            return {"error": f"unknown aft command {' '.join(words)!r}"}
        return {
            "registration": aft.registration.name.lower(),
            "asset_number": aft.settings.asset_number,
            "pos_id": aft.pos_id,
            "lax": aft.settings.lax,
            "acknowledged": acknowledged,
        }

    def _at_machine(self, cmd: str, machine_id: str, arg: str) -> dict[str, Any]:
        machine = next(
            (b.machine for b in self.bank.machines if b.machine.machine_id == machine_id), None
        )
        if machine is None:
            return {"error": f"no machine {machine_id}"}
        if cmd == "bill":
            machine.insert_bill(int(arg))
        elif arg == "open":
            machine.open_slot_door()
        else:
            machine.close_slot_door()
        return {"ok": True}

    def _report(self, cmd: str) -> dict[str, Any]:
        """The readings a benchmark collects (each read clears what it returns)."""
        if cmd == "state":
            return self.state()
        if cmd == "unlocks":
            data = {k: list(v) for k, v in self.unlock_times.items()}
            for v in self.unlock_times.values():
                v.clear()
            return {"unlocks": data}
        if cmd == "credit-log":
            log, self.credit_log = self.credit_log, []
            return {"credit_log": log}
        gaps, self.min_gap = self.min_gap, {}
        self.last_poll.clear()
        return {"spacing": gaps}

    def _credits_by_machine(self) -> dict[str, list[tuple[float, int]]]:
        """The credit log since the last read, per machine as [time, credits], then
        forgets it."""
        log, self.credit_log = self.credit_log, []
        out: dict[str, list[tuple[float, int]]] = {
            b.machine.machine_id: [] for b in self.bank.machines
        }
        for machine_id, credits, at in log:
            out[machine_id].append((at, credits))
        return out

    def command(self, line: str) -> dict[str, Any]:
        words = line.split()
        if not words:
            return {"error": "empty command"}
        chaos = self._chaos(words)
        if chaos is not None:
            return chaos
        cmd = words[0]
        if len(words) == 1 and cmd in ("state", "unlocks", "credit-log", "spacing"):
            return self._report(cmd)
        if cmd == "credits":
            return {cmd: self._credits_by_machine()}
        if cmd == "fault" and len(words) == 3:
            return self._fault(words[1], words[2])
        if cmd == "aft" and len(words) in (3, 4):
            return self._aft(words[1], words[2:])
        if cmd in ("bill", "door") and len(words) == 3:
            return self._at_machine(cmd, words[1], words[2])
        if cmd == "players" and len(words) == 2:
            if words[1] == "on" and self.bank.players is None:
                self.bank.start_players(seed=1, pace=1.0)
            return {"ok": True}
        return {"error": f"unknown command {line!r}"}


def floor_toml(machines: list[dict[str, Any]], bank: str = "A", *, aft: bool = True) -> str:
    """A floor file of one bank holding ``machines`` (their ``describe()`` records)."""
    rows = ",\n".join(
        f'  {{ id = "{m["machine"]}", endpoint = "{m["endpoint"]}" }}' for m in machines
    )
    head = f'[[bank]]\nname = "{bank}"\n'
    if aft:
        head += f'aft_registration_key = "{AFT_KEY}"\naft_pos_id = {AFT_POS_ID}\n'
    return f"{head}machines = [\n{rows},\n]\n"


class BankProcess:
    """The parent's side: start this module as a child process and talk to it."""

    def __init__(
        self,
        machines: int,
        *,
        host_timed: int = 0,
        players: bool = False,
        pace: float = 1.0,
        prefix: str = "EMU",
        batch_replies: bool = True,
        aft_lax: bool = False,
        aft_refuse: int = 0,
        real_time_silent_idle: bool = False,
    ) -> None:
        import subprocess

        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--machines",
            str(machines),
            "--host-timed",
            str(host_timed),
            "--pace",
            str(pace),
            "--prefix",
            prefix,
        ]
        if players:
            cmd.append("--players")
        if not batch_replies:
            cmd.append("--write-at-once")
        if aft_lax:
            cmd.append("--aft-lax")
        cmd += ["--aft-refuse", str(aft_refuse)]
        if real_time_silent_idle:
            cmd.append("--rte-silent-idle")
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        ready = self._read()
        if not ready.get("ready"):
            self.close()
            raise RuntimeError(f"emulated bank did not start: {ready}")
        self.machines: list[dict[str, Any]] = ready["machines"]

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("emulated bank process ended")
        data: dict[str, Any] = json.loads(line)
        return data

    def ask(self, command: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._read()

    def floor_toml(self, bank: str = "A", *, aft: bool = True) -> str:
        """A floor file of one bank with every machine; ``aft``: with the gateway's AFT
        registration key and POS ID for the bank (host-timed machines need them)."""
        return floor_toml(self.machines, bank, aft=aft)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=5)
            except Exception:
                self.proc.kill()
                self.proc.wait(timeout=5)

    def __enter__(self) -> BankProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BankGroup:
    """Many machines spread over several bank processes (at most ``per_process`` each),
    asked as one bank: a floor of a thousand machines is not one box, and one emulator
    loop serving them all would measure the emulator, not the gateway.  Machine names
    carry their process's number (``EMU2-017``); with one process they are as
    :class:`BankProcess` names them."""

    def __init__(self, machines: int, *, per_process: int = 250, **options: Any) -> None:
        if machines < 1 or per_process < 1:
            raise ValueError("machines and per_process must be positive")
        count = -(-machines // per_process)  # ceiling: as even a spread as whole numbers allow
        sizes = [machines // count + (1 if i < machines % count else 0) for i in range(count)]
        prefix = str(options.pop("prefix", "EMU"))
        self.banks: list[BankProcess] = []
        try:
            for i, size in enumerate(sizes):
                name = prefix if count == 1 else f"{prefix}{i + 1}"
                self.banks.append(BankProcess(size, prefix=name, **options))
        except BaseException:
            self.close()
            raise
        self.machines = [m for b in self.banks for m in b.machines]

    @property
    def pids(self) -> list[int]:
        return [b.proc.pid for b in self.banks]

    def ask(self, command: str) -> dict[str, Any]:
        """One command to every process (all sent before any reply is read, so they work
        at once); per-machine maps are merged, lists joined, an error returned as is."""
        for b in self.banks:
            assert b.proc.stdin is not None
            b.proc.stdin.write(command + "\n")
            b.proc.stdin.flush()
        merged: dict[str, Any] = {}
        for b in self.banks:
            reply = b._read()
            if "error" in reply:
                return reply
            for key, value in reply.items():
                if isinstance(value, dict):
                    merged.setdefault(key, {}).update(value)
                elif isinstance(value, list):
                    merged.setdefault(key, []).extend(value)
                else:
                    merged[key] = value
        return merged

    def floor_toml(self, bank: str = "A", *, aft: bool = True) -> str:
        return floor_toml(self.machines, bank, aft=aft)

    def close(self) -> None:
        for b in self.banks:
            b.close()

    def __enter__(self) -> BankGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, default=8)
    parser.add_argument("--host-timed", type=int, default=0, help="machines without LP 8C")
    parser.add_argument("--players", action="store_true", help="start simulated players")
    parser.add_argument("--pace", type=float, default=1.0, help="seconds between spins")
    parser.add_argument("--prefix", default="EMU")
    parser.add_argument(
        "--write-at-once", action="store_true", help="no reply outbox: write each reply at once"
    )
    parser.add_argument("--aft-lax", action="store_true", help="AFT without registration")
    parser.add_argument("--aft-refuse", type=int, default=0, help="last K refuse registration")
    parser.add_argument(
        "--rte-silent-idle",
        action="store_true",
        help="in real-time mode, silence to a general poll with nothing to report (not FF 00)",
    )
    args = parser.parse_args(argv)
    bank = Bank(
        args.machines,
        no_tournament_support=args.host_timed,
        name_prefix=args.prefix,
        batch_replies=not args.write_at_once,
        aft_lax=args.aft_lax,
        aft_refuse=args.aft_refuse,
        real_time_idle_frame=not args.rte_silent_idle,
    )
    await bank.start()
    host = Host(bank)
    # The bank's objects live as long as the process: keep them out of the collector's
    # full passes, whose pauses would show up as gaps between machines' unlock times.
    gc.collect()
    gc.freeze()
    if args.players:
        bank.start_players(seed=1, pace=args.pace)
    print(
        json.dumps({"ready": True, "machines": [b.describe() for b in bank.machines]}), flush=True
    )
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        while True:
            raw = await reader.readline()
            if not raw:
                break  # the parent went away
            line = raw.decode().strip()
            if line == "quit":
                break
            print(json.dumps(host.command(line)), flush=True)
    finally:
        await bank.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
