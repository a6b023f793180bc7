"""Sans-I/O codec for v1 board payloads: JSON bytes <-> typed, frozen messages.

Validation is by hand against the typed messages below rather than with a JSON Schema
engine: it costs a few microseconds a message, gives one clear error per field and adds
no dependency.  ``protocols/mqtt/schema/v1.json`` is the published contract for board
vendors; ``tests/protocols/mqtt/test_schema.py`` checks that it names the same channels, fields,
commands and event kinds as this module, so the two cannot drift apart.

Decoding never trusts the wire: every problem raises :class:`PayloadError` (a
``ValueError``) naming the field, and the caller logs, counts and drops the message.
Size, nesting depth, number length and UTF-8 are bounded before or while parsing
(:mod:`protocols.mqtt.safejson`), so no payload can raise anything else.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from protocols.mqtt import safejson
from protocols.mqtt.topics import VERSION, Channel, TopicError, check_segment

MAX_PAYLOAD = 16 * 1024  # bytes; a board message is a few hundred


E = TypeVar("E", bound=enum.Enum)


class PayloadError(ValueError):
    """A payload that is not valid v1 JSON for its channel."""


class Command(enum.Enum):
    LOCK = "lock"
    UNLOCK = "unlock"
    ENTER_TOURNAMENT = "enter-tournament"
    EXIT_TOURNAMENT = "exit-tournament"
    READ_METERS = "read-meters"
    READ_CREDITS = "read-credits"
    READ_CLOCK = "read-clock"
    SET_CLOCK = "set-clock"
    IDENTITY = "identity"
    REPORT_STATE = "report-state"  # republish state and meters (resync after reconnect)
    SHOW_MESSAGE = "show-message"  # a line on the machine's display (a refused card)


class BoardEventKind(enum.Enum):
    """What a board reports on its ``event`` channel (the machine model's vocabulary)."""

    DOOR_OPENED = "door-opened"
    DOOR_CLOSED = "door-closed"
    POWER_LOST = "power-lost"
    POWER_APPLIED = "power-applied"
    TILT = "tilt"
    TILT_CLEARED = "tilt-cleared"
    HANDPAY_PENDING = "handpay-pending"
    HANDPAY_RESET = "handpay-reset"
    GAME_STARTED = "game-started"
    GAME_ENDED = "game-ended"
    PLAY_LOCKED = "play-locked"
    PLAY_ENABLED = "play-enabled"
    TOURNAMENT_ENTERED = "tournament-entered"
    TOURNAMENT_EXITED = "tournament-exited"
    TOURNAMENT_TIME_UP = "tournament-time-up"
    CREDITS_CHANGED = "credits-changed"
    QUEUE_OVERFLOW = "queue-overflow"  # the board dropped events (like SAS exception 70)
    OPERATOR_MENU = "operator-menu"  # SAS 84/85: an attendant in the machine's menu
    OUT_OF_SERVICE = "out-of-service"  # SAS 86: the EGM took itself out of service


class CardAction(enum.Enum):
    CARD_IN = "card-in"
    CARD_OUT = "card-out"


class ReaderKind(enum.Enum):
    """The reader a card number came from (it says how to read the number)."""

    MAGSTRIPE = "magstripe"  # ISO 7813 track 1 or 2: the primary account number
    RFID = "rfid"  # the card's UID in upper-case hex
    EMULATED = "emulated"  # an emulated board's card slot


#: A card number as a reader gives it: what fits ``players.card_number``.
CARD_NUMBER = re.compile(r"^[0-9A-Za-z]{1,32}$")
MESSAGE_MAX = 80  # characters on a machine's display line


class ErrorKind(enum.Enum):
    REFUSED = "refused"  # the machine would not (cashable credits, door open, ...)
    BAD_REQUEST = "bad-request"  # the board could not parse or does not know the command


@dataclass(frozen=True, slots=True)
class Status:
    online: bool
    at: datetime


@dataclass(frozen=True, slots=True)
class TournamentView:
    credits: int
    seconds_left: float
    started: bool
    time_up: bool


@dataclass(frozen=True, slots=True)
class State:
    seq: int
    at: datetime
    powered: bool
    locked: bool
    door_open: bool
    tilted: bool
    handpay_pending: bool
    game_in_progress: bool
    credits: int
    tournament: TournamentView | None


@dataclass(frozen=True, slots=True)
class Event:
    seq: int
    at: datetime
    kind: BoardEventKind


@dataclass(frozen=True, slots=True)
class Meters:
    """Credit and tournament-meter report, sent after every game and on request."""

    seq: int
    at: datetime
    credits: int
    in_tournament: bool
    games_played: int
    games_won: int
    credits_wagered: int
    credits_won: int


@dataclass(frozen=True, slots=True)
class CommandMessage:
    id: str
    cmd: Command
    at: datetime
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Reply:
    id: str
    ok: bool
    at: datetime
    result: dict[str, Any] = field(default_factory=dict)
    error: ErrorKind | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Card:
    """A player's card put in (``card-in``) or pulled (``card-out``) at ``machine``.

    ``display``: the board can show a line on the machine (``show-message``)."""

    seq: int
    at: datetime
    action: CardAction
    machine: str
    card: str
    reader: ReaderKind
    display: bool = False


BoardMessage = Status | State | Event | Meters | Reply | CommandMessage | Card

_CHANNEL_OF: dict[type[Any], Channel] = {
    Status: Channel.STATUS,
    State: Channel.STATE,
    Event: Channel.EVENT,
    Meters: Channel.METERS,
    Reply: Channel.REPLY,
    CommandMessage: Channel.CMD,
    Card: Channel.CARD,
}


def channel_of(message: BoardMessage) -> Channel:
    return _CHANNEL_OF[type(message)]


# -- encoding -------------------------------------------------------------------------
def _ts(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError("timestamps must carry a time zone")
    return value.isoformat()


def to_json(message: BoardMessage) -> dict[str, Any]:
    body: dict[str, Any] = {"v": VERSION}
    if isinstance(message, Status):
        body |= {"status": "online" if message.online else "offline", "at": _ts(message.at)}
    elif isinstance(message, State):
        t = message.tournament
        body |= {
            "seq": message.seq,
            "at": _ts(message.at),
            "powered": message.powered,
            "locked": message.locked,
            "door_open": message.door_open,
            "tilted": message.tilted,
            "handpay_pending": message.handpay_pending,
            "game_in_progress": message.game_in_progress,
            "credits": message.credits,
            "tournament": None
            if t is None
            else {
                "credits": t.credits,
                "seconds_left": round(t.seconds_left, 3),
                "started": t.started,
                "time_up": t.time_up,
            },
        }
    elif isinstance(message, Event):
        body |= {"seq": message.seq, "at": _ts(message.at), "kind": message.kind.value}
    elif isinstance(message, Meters):
        body |= {
            "seq": message.seq,
            "at": _ts(message.at),
            "credits": message.credits,
            "in_tournament": message.in_tournament,
            "games_played": message.games_played,
            "games_won": message.games_won,
            "credits_wagered": message.credits_wagered,
            "credits_won": message.credits_won,
        }
    elif isinstance(message, Card):
        if not CARD_NUMBER.match(message.card):
            raise ValueError(f"card number {message.card!r} is not 1-32 letters or digits")
        body |= {
            "seq": message.seq,
            "at": _ts(message.at),
            "action": message.action.value,
            "machine": check_segment("machine", message.machine),
            "card": message.card,
            "reader": message.reader.value,
            "display": message.display,
        }
    elif isinstance(message, CommandMessage):
        _check_args(message.cmd, message.args)
        body |= {"id": message.id, "cmd": message.cmd.value, "at": _ts(message.at)}
        body["args"] = dict(message.args)
    else:
        body |= {"id": message.id, "ok": message.ok, "at": _ts(message.at)}
        body["result"] = dict(message.result)
        if message.error is not None:
            body["error"] = message.error.value
            body["reason"] = message.reason
    return body


def encode(message: BoardMessage) -> bytes:
    return json.dumps(to_json(message), separators=(",", ":")).encode()


# -- decoding -------------------------------------------------------------------------
class _Fields:
    """Typed access to one JSON object; every failure names the field."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise PayloadError(f"{where}: expected a JSON object")
        self.data: dict[str, Any] = data
        self.where = where

    def _get(self, name: str) -> Any:
        if name not in self.data:
            raise PayloadError(f"{self.where}.{name}: missing")
        return self.data[name]

    def boolean(self, name: str) -> bool:
        value = self._get(name)
        if not isinstance(value, bool):
            raise PayloadError(f"{self.where}.{name}: expected true or false")
        return value

    def integer(self, name: str, *, minimum: int = 0) -> int:
        value = self._get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise PayloadError(f"{self.where}.{name}: expected an integer")
        if value < minimum:
            raise PayloadError(f"{self.where}.{name}: must be >= {minimum}")
        return value

    def number(self, name: str) -> float:
        value = self._get(name)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise PayloadError(f"{self.where}.{name}: expected a non-negative number")
        return float(value)

    def text(self, name: str, *, max_len: int = 200) -> str:
        value = self._get(name)
        if not isinstance(value, str) or not 0 < len(value) <= max_len:
            raise PayloadError(f"{self.where}.{name}: expected a string of 1-{max_len} chars")
        return value

    def when(self, name: str) -> datetime:
        raw = self.text(name, max_len=40)
        try:
            value = datetime.fromisoformat(raw)
        except ValueError:
            raise PayloadError(f"{self.where}.{name}: not an ISO 8601 timestamp") from None
        if value.tzinfo is None:
            raise PayloadError(f"{self.where}.{name}: timestamp needs a UTC offset")
        return value

    def choice(self, name: str, kind: type[E]) -> E:
        raw = self._get(name)
        try:
            return kind(raw)
        except ValueError:
            raise PayloadError(f"{self.where}.{name}: unknown value {raw!r}") from None

    def obj(self, name: str) -> _Fields:
        return _Fields(self._get(name), f"{self.where}.{name}")


def _check_args(cmd: Command, args: dict[str, Any]) -> None:
    f = _Fields(args, f"{cmd.value}.args")
    if cmd is Command.ENTER_TOURNAMENT:
        f.integer("credits", minimum=1)
        f.integer("seconds", minimum=1)
        if "heat" in args:
            f.text("heat", max_len=32)  # optional: the gateway's heat id, shown over SNMP
        allowed = {"credits", "seconds", "heat"}
    elif cmd is Command.SET_CLOCK:
        f.when("when")
        allowed = {"when"}
    elif cmd is Command.SHOW_MESSAGE:
        f.text("text", max_len=MESSAGE_MAX)
        f.integer("seconds", minimum=1)
        if args["seconds"] > 600:
            raise PayloadError(f"{cmd.value}.args.seconds: at most 600")
        allowed = {"text", "seconds"}
    else:
        allowed = set()
    extra = set(args) - allowed
    if extra:
        raise PayloadError(f"{cmd.value}.args: unexpected {sorted(extra)}")


def _card(f: _Fields) -> Card:
    card = f.text("card", max_len=32)
    if not CARD_NUMBER.match(card):
        raise PayloadError("card.card: expected 1-32 letters or digits")
    try:
        machine = check_segment("machine", f.text("machine", max_len=64))
    except TopicError as exc:
        raise PayloadError(f"card.machine: {exc}") from None
    return Card(
        seq=f.integer("seq"),
        at=f.when("at"),
        action=f.choice("action", CardAction),
        machine=machine,
        card=card,
        reader=f.choice("reader", ReaderKind),
        display=f.boolean("display") if "display" in f.data else False,
    )


def _status(f: _Fields) -> Status:
    status = f.text("status")
    if status not in ("online", "offline"):
        raise PayloadError(f"status.status: unknown value {status!r}")
    return Status(online=status == "online", at=f.when("at"))


_SIMPLE: dict[Channel, Callable[[_Fields], BoardMessage]] = {
    Channel.STATUS: _status,
    Channel.CARD: _card,
}


def from_json(channel: Channel, data: Any) -> BoardMessage:
    f = _Fields(data, channel.value)
    version = f.integer("v")
    if version != VERSION:
        raise PayloadError(f"{channel.value}.v: unsupported schema version {version}")
    simple = _SIMPLE.get(channel)
    if simple is not None:
        return simple(f)
    if channel is Channel.STATE:
        tournament: TournamentView | None = None
        if f.data.get("tournament") is not None:
            t = f.obj("tournament")
            tournament = TournamentView(
                credits=t.integer("credits"),
                seconds_left=t.number("seconds_left"),
                started=t.boolean("started"),
                time_up=t.boolean("time_up"),
            )
        elif "tournament" not in f.data:
            raise PayloadError("state.tournament: missing (null when not in tournament)")
        return State(
            seq=f.integer("seq"),
            at=f.when("at"),
            powered=f.boolean("powered"),
            locked=f.boolean("locked"),
            door_open=f.boolean("door_open"),
            tilted=f.boolean("tilted"),
            handpay_pending=f.boolean("handpay_pending"),
            game_in_progress=f.boolean("game_in_progress"),
            credits=f.integer("credits"),
            tournament=tournament,
        )
    if channel is Channel.EVENT:
        return Event(seq=f.integer("seq"), at=f.when("at"), kind=f.choice("kind", BoardEventKind))
    if channel is Channel.METERS:
        return Meters(
            seq=f.integer("seq"),
            at=f.when("at"),
            credits=f.integer("credits"),
            in_tournament=f.boolean("in_tournament"),
            games_played=f.integer("games_played"),
            games_won=f.integer("games_won"),
            credits_wagered=f.integer("credits_wagered"),
            credits_won=f.integer("credits_won"),
        )
    if channel is Channel.CMD:
        cmd = f.choice("cmd", Command)
        args = f.data.get("args", {})
        if not isinstance(args, dict):
            raise PayloadError("cmd.args: expected a JSON object")
        _check_args(cmd, args)
        return CommandMessage(id=f.text("id", max_len=64), cmd=cmd, at=f.when("at"), args=args)
    ok = f.boolean("ok")
    result = f.data.get("result", {})
    if not isinstance(result, dict):
        raise PayloadError("reply.result: expected a JSON object")
    error = None if ok else f.choice("error", ErrorKind)
    reason = "" if ok else str(f.data.get("reason", ""))[:200]
    return Reply(
        id=f.text("id", max_len=64),
        ok=ok,
        at=f.when("at"),
        result=result,
        error=error,
        reason=reason,
    )


def decode(channel: Channel, payload: bytes) -> BoardMessage:
    """Bytes from the wire to a typed message, or :class:`PayloadError`."""
    try:
        data = safejson.loads(payload, max_bytes=MAX_PAYLOAD)
    except safejson.JsonLimitError as exc:
        raise PayloadError(f"{channel.value}: {exc}") from None
    return from_json(channel, data)
