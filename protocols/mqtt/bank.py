"""Bank-wide commands: one publish that starts (or stops) every board of a heat at once.

Topic ``reelgate/v1/<site>/boards/cmd`` (gateway -> boards, QoS 0, never retained); every
board of the site subscribes to it beside its own ``cmd`` topic.  Payload::

    {"v": 1, "id": "9f3c...", "cmd": "unlock", "at": "...",
     "targets": ["MQ-001", "MQ-002", ...]}

A board named in ``targets`` runs the command as if it had come on its own ``cmd`` topic,
with the correlation id ``<id>.<n>`` (``n``: its place in ``targets``, from 0), and
answers on its own ``reply`` topic; a board not named ignores the message.  So the
reply, the reply cache and the replay of repeats are exactly the per-board command's,
and the gateway can send the same command to one board alone, under the same id, when
that board has not answered the bank-wide one in time (it joined late, missed it over
a reconnect): the board runs it once either way.

Why one topic per site rather than one per bank: nothing to learn or to lose (a board
that restarts is subscribed again at once), and the heat's boards are named in the
message.  Why QoS 0: the bank-wide command is the fast path, not the guarantee.  At QoS 1
each of the broker's copies costs the board a PUBACK (a write and a loop turn); a copy
lost with a dropped connection is what the per-board command (QoS 1) is sent for.

Only ``lock`` and ``unlock`` travel bank-wide (:data:`BANK_COMMANDS`): the heat's start
and end, which carry no per-machine arguments.  Everything else stays per board.
Sans-I/O: bytes in, typed messages out; a bad payload is :class:`PayloadError`.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from datetime import datetime

from protocols.mqtt import safejson
from protocols.mqtt.codec import Command, CommandMessage, PayloadError
from protocols.mqtt.topics import VERSION, check_segment, site_prefix

BANK_COMMANDS = frozenset({Command.LOCK, Command.UNLOCK})
MAX_TARGETS = 2000  # boards one message may name; a site's floor, with room
MAX_BANK_PAYLOAD = 64 * 1024  # ~10 bytes a board: 2,000 boards fit
ID_MAX = 48  # so that ``<id>.<n>`` stays within a command id's 64 characters


def bank_topic(site: str) -> str:
    return f"{site_prefix(site)}/boards/cmd"


def member_id(bank_id: str, number: int) -> str:
    """The correlation id of one board's share of a bank-wide command."""
    return f"{bank_id}.{number}"


@dataclass(frozen=True, slots=True)
class BankCommand:
    id: str
    cmd: Command
    at: datetime
    # The boards named, each once; a board's place is its share's number.  A list, not
    # a map of numbers: every board decodes the whole message, and a list of strings
    # decodes ~6x faster (no number per board through the bounded parser).
    targets: tuple[str, ...] = ()

    def for_machine(self, machine: str) -> CommandMessage | None:
        """This board's command (its own correlation id), or None if not named."""
        try:
            number = self.targets.index(machine)
        except ValueError:
            return None
        return CommandMessage(id=member_id(self.id, number), cmd=self.cmd, at=self.at)


def _check(message: BankCommand) -> None:
    if message.cmd not in BANK_COMMANDS:
        raise PayloadError(f"bank.cmd: {message.cmd.value!r} is not a bank-wide command")
    if not 0 < len(message.id) <= ID_MAX:
        raise PayloadError(f"bank.id: expected a string of 1-{ID_MAX} chars")
    if not 0 < len(message.targets) <= MAX_TARGETS:
        raise PayloadError(f"bank.targets: expected 1-{MAX_TARGETS} boards")
    if message.at.tzinfo is None:
        raise PayloadError("bank.at: timestamp needs a UTC offset")


def encode_bank(message: BankCommand) -> bytes:
    _check(message)
    for machine in message.targets:
        check_segment("machine", machine)
    if len(set(message.targets)) != len(message.targets):
        raise PayloadError("bank.targets: a board named twice")
    body = {
        "v": VERSION,
        "id": message.id,
        "cmd": message.cmd.value,
        "at": message.at.isoformat(),
        "targets": list(message.targets),
    }
    return json.dumps(body, separators=(",", ":")).encode()


@functools.lru_cache(maxsize=4)
def decode_bank(payload: bytes) -> BankCommand:
    """Bytes from the wire to a :class:`BankCommand`, or :class:`PayloadError`.

    Every board decodes the whole message (~60 us for 200 names); a process that serves
    several boards (the emulator, an agent on a multi-drop loop) gets the same bytes for
    each, so the last few are kept (pure function, immutable result; errors not kept)."""
    try:
        data = safejson.loads(payload, max_bytes=MAX_BANK_PAYLOAD)
    except safejson.JsonLimitError as exc:
        raise PayloadError(f"bank: {exc}") from None
    if not isinstance(data, dict):
        raise PayloadError("bank: expected a JSON object")
    if data.get("v") != VERSION:
        raise PayloadError(f"bank.v: unsupported schema version {data.get('v')!r}")
    extra = set(data) - {"v", "id", "cmd", "at", "targets"}
    if extra:
        raise PayloadError(f"bank: unexpected {sorted(extra)}")
    raw_id, raw_cmd, raw_at = data.get("id"), data.get("cmd"), data.get("at")
    if not isinstance(raw_id, str):
        raise PayloadError("bank.id: expected a string")
    try:
        cmd = Command(raw_cmd)
    except ValueError:
        raise PayloadError(f"bank.cmd: unknown value {raw_cmd!r}") from None
    try:
        at = datetime.fromisoformat(raw_at) if isinstance(raw_at, str) else None
    except ValueError:
        at = None
    if at is None:
        raise PayloadError("bank.at: not an ISO 8601 timestamp")
    targets = data.get("targets")
    # set(map(type, ...)): the check at C speed (a generator over 200 names cost more
    # than the JSON parse itself)
    if not isinstance(targets, list) or not set(map(type, targets)) <= {str}:
        raise PayloadError("bank.targets: expected a list of machine names")
    # A board only looks its own name up: the names are not checked one by one here.
    message = BankCommand(id=raw_id, cmd=cmd, at=at, targets=tuple(targets))
    _check(message)
    return message
