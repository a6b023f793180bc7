"""``reelgate super9 …``: the Super 9 roulette promotion at the desk and the table.

Every change is recorded as the host's operating-system account (``os:ACCOUNT@HOST``);
the rule's second person — the confirmer of a manual spin (S9-29), the sign-off of a
number change (S9-23), the witness of a prize receipt (S9-26) — is an account that types
its password.  Times default to now; ``--now`` keys another (ISO 8601; without an
offset, venue-local): any time for a read, a back-dated write only with ``--director``
(a promotion director) and ``--reason`` and never past the S9-6 cut-offs of the real
time (:mod:`gateway.clocks`); a training database takes any time.
Reads (calendar, settings, report, jackpot) accept ``--json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar
from zoneinfo import ZoneInfo

from gateway.accounts.roles import Permission, Role
from gateway.app import keyed
from gateway.app.database import guarded, open_engine
from gateway.app.identity import host_actor
from gateway.app.keyed import SecondPerson, second_name
from gateway.app.options import (
    DEFAULT_ZONE,
    PLAYER_HELP,
    TIME_HELP,
    add_database,
    add_first,
    add_json,
    add_now,
    add_write,
    parse_time,
    write_of,
)
from gateway.errors import OperatorError
from gateway.feed import FeedPublisher
from gateway.super9 import deadlines
from storage.db import make_sessionmaker
from storage.enums import Tender

# The Super 9 desk and alembic load slowly; every other command (a heat's recovery among
# them) would pay for them at start-up, so the handlers import them when they run.
if TYPE_CHECKING:
    from gateway.super9.desk import SpinRecorded, Super9Desk
    from gateway.super9.desk.wheel import WheelRun

T = TypeVar("T")
# A back-dated Super 9 write is authorised by the promotion's director.
BACKDATE_ROLES = frozenset({Role.PROMOTION_DIRECTOR})


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "super9", help="the Super 9 roulette promotion: tickets, wheel, draw, jackpot"
    )
    actions = parser.add_subparsers(dest="super9_action", required=True, metavar="ACTION")

    def action(
        name: str,
        help_text: str,
        handler: Callable[[argparse.Namespace], int],
        *,
        write: bool = True,
        read: bool = False,
        second: SecondPerson | None = None,
        keyed_time: bool = True,
    ) -> argparse.ArgumentParser:
        p = actions.add_parser(name, help=help_text)
        add_database(p)
        if write:
            add_write(p, now=keyed_time)
            p.set_defaults(director_roles=BACKDATE_ROLES, second_person=second)
        elif keyed_time:
            add_now(p)
        if second is not None:
            p.add_argument(
                second.option, dest=second.dest, metavar="ACCOUNT",
                help="the second person's account (required; its password is asked), "
                "not the --as account",
            )  # fmt: skip
            add_first(p)
        if write and (not read or name in ("close", "claim")):
            p.add_argument("--mqtt", help="publish the live draw to this broker (mqtt://H:P)")
            p.add_argument("--site", default="venue", help="MQTT site prefix (venue)")
        if read:
            add_json(p)
        p.set_defaults(handler=handler)
        return p

    p = action("calendar", "list sessions (rule 4)", _calendar, write=False, read=True)
    p.add_argument("--from", dest="start", help="first day (YYYY-MM-DD, default today)")
    p.add_argument("--days", type=int, default=14, help="how many days (14)")

    for name, cancel in (("calendar-add", False), ("calendar-cancel", True)):
        p = action(
            name, f"one-off change: {'cancel a' if cancel else 'add a'} session", _calendar_change
        )
        p.add_argument("--at", required=True, help=f"session start: {TIME_HELP}")
        p.add_argument("--reason", required=True)
        p.set_defaults(cancel=cancel)

    p = action("settings", "show the settings", _settings, write=False, read=True)
    p = action("set", "change settings: KEY=VALUE ...", _set)
    p.add_argument("pairs", nargs="+", metavar="KEY=VALUE")
    p.add_argument("--reason", required=True)
    p.set_defaults(remote=_remote_set)

    p = action("open", "start the draw of a session", _open)
    p.add_argument("--session-at", required=True, help=f"session start: {TIME_HELP}")

    p = action("close", "settle a session: winners, prizes, jackpot", _close, read=True)
    p.add_argument("--session", type=int, required=True)

    p = action("sell", "cash desk sale (rules 1-6)", _sell)
    p.add_argument("--ticket", required=True, help="printed ticket number")
    p.add_argument("--player", required=True, help=PLAYER_HELP)
    p.add_argument("--tender", choices=["cash", "card"], default="cash", help="(default cash)")

    p = action("hand-in", "key the top copy (rules 6-11)", _hand_in)
    p.add_argument("--ticket", required=True)
    p.add_argument("--numbers", required=True, help='nine numbers, e.g. "3 7 12 ..."')
    # S9-7: the verification section as the player filled it in.
    p.add_argument("--name", default="", help="name on the verification section")
    p.add_argument("--id", dest="id_ref", default="", help="ID or card number on it")
    p.add_argument("--contact", default="", help="contact details on it")
    p.add_argument("--signed", action="store_true", help="the section is signed")

    p = action(
        "change-numbers",
        "change numbers before the game, signed off by the Promotion Director (rule 23)",
        _change,
        second=SecondPerson(Permission.SUPER9_NUMBERS, "approved_by", "--approved-by"),
    )
    p.add_argument("--ticket", required=True)
    p.add_argument("--numbers", required=True)
    p.add_argument("--reason", required=True)

    p = action("disqualify", "flag a marked/scratched ticket (rule 21) or a breach", _disqualify)
    p.add_argument("--ticket", required=True)
    p.add_argument("--rule", type=int, default=21, choices=(9, 21, 24, 28))
    p.add_argument("--reason", required=True)

    # The wheel's results carry the host clock, never a keyed time.
    p = action("wheel", "connect the wheel and record its results", _wheel, keyed_time=False)
    p.add_argument("--session", type=int, required=True)
    p.add_argument("--url", required=True, help="wheel+serial:///dev/ttyUSB0 or wheel+tcp://H:P")
    p.add_argument("--max-results", type=int, default=None, help="stop after N results")
    p.add_argument("--confirmations", type=int, default=2, help="identical result lines needed (2)")

    p = action("void", 'a "No spin" by wheel game number or spin sequence (rule 18)', _void)
    p.add_argument("--session", type=int, required=True)
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--game", type=int, help="wheel game number")
    group.add_argument("--seq", type=int, help="spin sequence number (manual spins)")
    p.add_argument("--reason", required=True)

    p = action(
        "manual-spin",
        "key a result by hand, confirmed by a second person (rule 29)",
        _manual,
        second=SecondPerson(Permission.SUPER9_MANUAL_SPIN, "confirmed_by", "--confirmed-by"),
    )
    p.add_argument("--session", type=int, required=True)
    p.add_argument("--number", type=int, required=True)
    p.add_argument("--confirm", type=int, required=True, help="the number keyed again")
    p.add_argument("--game", type=int, default=None, help="wheel game number, if any")
    p.add_argument("--reason", required=True, help="why the wheel feed is not used")

    p = action(
        "claim",
        'register a "SUPER 9" claim, keying the duplicate (rules 9, 14, 22)',
        _claim,
        read=True,
    )
    p.add_argument("--session", type=int, required=True)
    p.add_argument("--ticket", required=True)
    p.add_argument("--duplicate", required=True, help="the numbers on the player's duplicate")

    p = action(
        "sign",
        "record the winner's signature of receipt, witnessed (rule 26)",
        _sign,
        second=SecondPerson(Permission.SUPER9_PRIZE_RECEIPT, "witness", "--witness"),
    )
    p.add_argument("--session", type=int, required=True)
    p.add_argument("--ticket", required=True)
    p.add_argument("--kind", required=True, choices=("jackpot", "consolation"))
    p.add_argument("--signature", required=True, help="receipt / signature reference")
    p.add_argument("--signer", required=True, help=f"who signs: {PLAYER_HELP}")

    p = action("report", "session report", _report, write=False, read=True)
    p.add_argument("--session", type=int, required=True)

    p = action(
        "jackpot",
        "the progressive jackpot and its history (rule 15)",
        _jackpot,
        write=False,
        read=True,
    )
    p.add_argument("--history", action="store_true")


# -- plumbing -----------------------------------------------------------------------------


def _run(args: argparse.Namespace, work: Callable[[Super9Desk], Awaitable[T]]) -> T:
    from gateway.super9.desk import Super9Desk

    async def go() -> T:
        url, engine = await open_engine(args.database)
        mqtt: Any = None
        try:
            sessions = make_sessionmaker(engine)
            if getattr(args, "writes", False):
                await guarded(url, keyed.preflight(sessions, args))
            else:
                keyed.banner(await guarded(url, keyed.training_of(sessions)))
            feed: FeedPublisher | None = None
            if getattr(args, "mqtt", None):
                mqtt, feed = await _open_feed(args.mqtt, args.site)
            return await work(Super9Desk(sessions, feed=feed))
        finally:
            if mqtt is not None:
                await mqtt.close()
            await engine.dispose()

    return asyncio.run(go())


async def _open_feed(url: str, site: str) -> tuple[Any, FeedPublisher]:
    """The live draw goes to displays through the broker, like the tournament feed."""
    from protocols.mqtt.client import MqttSession, MqttSettings, MqttUnavailable

    try:
        session = MqttSession(MqttSettings.from_url(url))
    except ValueError as exc:
        raise OperatorError(f"--mqtt: {exc}") from None
    try:
        await session.start()
    except MqttUnavailable as exc:
        raise OperatorError(f"--mqtt: {exc}") from None
    return session, _MqttFeed(session, site)


def _parse_time(text: str, field: str) -> datetime:
    return parse_time(text, DEFAULT_ZONE, field)


def _now(args: argparse.Namespace) -> datetime:
    """A read's time (any ``--now``), or a write's judged time (:func:`write_of`)."""
    if getattr(args, "writes", False):
        return write_of(args, DEFAULT_ZONE).at
    if args.now:
        return _parse_time(args.now, "--now")
    return keyed.REAL_CLOCK().astimezone(ZoneInfo(DEFAULT_ZONE))


def _rand(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}R{abs(cents) // 100:,}.{abs(cents) % 100:02d}"


def _print(args: argparse.Namespace, data: Any, text: str) -> int:
    print(json.dumps(data, default=str, indent=2) if getattr(args, "json", False) else text)
    return 0


# -- handlers -----------------------------------------------------------------------------


def _calendar(args: argparse.Namespace) -> int:
    from gateway.super9.rules.calendar import hand_in_cutoff, sales_window

    try:
        given = date.fromisoformat(args.start) if args.start else None
    except ValueError:
        raise OperatorError(f"--from: {args.start!r} is not YYYY-MM-DD") from None
    if not 1 <= args.days <= 400:
        raise OperatorError("--days must be between 1 and 400")

    async def work(desk: Super9Desk) -> list[dict[str, str]]:
        cal = await desk.calendar()
        start = given or _now(args).astimezone(cal.tz).date()
        rows = []
        for s in cal.between(start, start + timedelta(days=args.days - 1)):
            opens, closes = sales_window(s)
            rows.append(
                {
                    "starts_at": s.isoformat(),
                    "sales_open": opens.isoformat(),
                    "sales_close": closes.isoformat(),
                    "hand_in_cutoff": hand_in_cutoff(s).isoformat(),
                }
            )
        return rows

    rows = _run(args, work)
    text = (
        "\n".join(
            f"{r['starts_at'][:16].replace('T', ' ')}  sales until {r['sales_close'][11:16]}, "
            f"hand-in until {r['hand_in_cutoff'][11:16]}"
            for r in rows
        )
        or "no sessions"
    )
    return _print(args, rows, text)


def _calendar_change(args: argparse.Namespace) -> int:
    starts = _parse_time(args.at, "--at")
    _run(
        args,
        lambda d: d.change_calendar(
            starts, cancel=args.cancel, actor=host_actor(), reason=args.reason, now=_now(args)
        ),
    )
    print(f"{'cancelled' if args.cancel else 'added'} session {starts.isoformat()}")
    return 0


def _settings(args: argparse.Namespace) -> int:
    settings = _run(args, lambda d: d.settings())
    data = settings.to_json()
    return _print(args, data, "\n".join(f"{k} = {v}" for k, v in data.items()))


def _coerce(key: str, text: str) -> Any:
    from gateway.super9.rules.settings import Super9Settings

    defaults = Super9Settings().to_json()
    if key not in defaults:
        raise OperatorError(f"unknown setting {key!r}; known: {', '.join(sorted(defaults))}")
    sample = defaults[key]
    if isinstance(sample, bool):
        if text.lower() not in ("yes", "no", "true", "false", "1", "0"):
            raise OperatorError(f"{key}: say yes or no")
        return text.lower() in ("yes", "true", "1")
    if isinstance(sample, int):
        try:
            return int(text)
        except ValueError:
            raise OperatorError(f"{key}: {text!r} is not a whole number") from None
    return text


def _changes(args: argparse.Namespace) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for pair in args.pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise OperatorError(f"{pair!r}: write KEY=VALUE")
        changes[key.strip()] = _coerce(key.strip(), value.strip())
    return changes


def _remote_set(args: argparse.Namespace) -> int:
    """Through the API (``--server``): changed under the token's account."""
    from gateway.app.remote import call

    changes = _changes(args)
    if "verification_fields" in changes:  # the CLI's comma-separated text, as a list
        text = str(changes["verification_fields"])
        changes["verification_fields"] = [v.strip() for v in text.split(",") if v.strip()]
    new = call(args, "PATCH", "/super9/settings", {"changes": changes, "reason": args.reason})
    print("\n".join(f"{k} = {new[k]}" for k in changes))
    return 0


def _set(args: argparse.Namespace) -> int:
    changes = _changes(args)
    new = _run(
        args,
        lambda d: d.change_settings(
            changes, actor=host_actor(), reason=args.reason, now=_now(args)
        ),
    )
    print("\n".join(f"{k} = {new.to_json()[k]}" for k in changes))
    return 0


def _open(args: argparse.Namespace) -> int:
    starts = _parse_time(args.session_at, "--session-at")
    sid = _run(args, lambda d: d.open_session(starts, actor=host_actor(), now=_now(args)))
    print(f"session {sid} drawing")
    return 0


def _close(args: argparse.Namespace) -> int:
    async def work(desk: Super9Desk) -> dict[str, Any]:
        await desk.close_session(args.session, actor=host_actor(), now=_now(args))
        return await desk.report(args.session)

    report = _run(args, work)
    result = report["result"]
    lines = [f"session {args.session} closed; buy-ins {_rand(result['buy_ins_cents'])}"]
    lines += [
        f"  {p['kind']:<12} ticket {p['ticket']}: {_rand(p['amount_cents'])}"
        for p in result["payouts"]
    ] or ["  no winner"]
    lines.append(f"jackpot now {_rand(result['jackpot_out_cents'])}")
    return _print(args, report, "\n".join(lines))


async def _session_of(d: Super9Desk, serial: str) -> str:
    """The session the ticket now plays in, as the desk names it (its day and time)."""
    from gateway.super9.rules.calendar import session_words

    starts = await d.sold_for(serial)
    return "-" if starts is None else session_words(starts, (await d.calendar()).tz)


def _sell(args: argparse.Namespace) -> int:
    async def work(d: Super9Desk) -> str:
        write = write_of(args, DEFAULT_ZONE)
        deadlines.super9_sale(await d.calendar(), write)  # S9-6b at the real time
        await d.sell(
            args.ticket, args.player, actor=host_actor(), now=write.at, tender=Tender(args.tender)
        )
        return await _session_of(d, args.ticket)

    print(f"ticket {args.ticket} sold for the session of {_run(args, work)}")
    return 0


def _hand_in(args: argparse.Namespace) -> int:
    from gateway.super9.desk.core import Disqualified
    from gateway.super9.rules.verification import Verification

    section = Verification(args.name, args.id_ref, args.contact, args.signed)

    async def work(d: Super9Desk) -> str:
        write = write_of(args, DEFAULT_ZONE)
        sold_for = await d.sold_for(args.ticket)
        if sold_for is not None:  # S9-6c at the real time
            deadlines.super9_hand_in(await d.calendar(), sold_for, write)
        try:
            await d.hand_in(
                args.ticket, args.numbers, actor=host_actor(), now=write.at, verification=section
            )
        except Disqualified as exc:  # S9-9: recorded, so not an input error (exit 2)
            return f"NOT entered: {exc}"
        return f"entered into the session of {await _session_of(d, args.ticket)}"

    said = _run(args, work)
    if said.startswith("NOT"):
        print(said)
        return 1
    print(f"ticket {args.ticket} {said}")
    return 0


def _change(args: argparse.Namespace) -> int:
    _run(
        args,
        lambda d: d.change_numbers(
            args.ticket,
            args.numbers,
            actor=host_actor(),
            approved_by=second_name(args),
            reason=args.reason,
            now=_now(args),
        ),
    )
    print(f"ticket {args.ticket} numbers changed")
    return 0


def _disqualify(args: argparse.Namespace) -> int:
    out = _run(
        args,
        lambda d: d.disqualify(
            args.ticket, actor=host_actor(), reason=args.reason, rule=args.rule, now=_now(args)
        ),
    )
    print(disqualified_line(args.ticket, args.rule, out))
    return 0


def disqualified_line(serial: str, rule: int, out: list[str]) -> str:
    """What the disqualification took out, in the sheet's terms (S9-9, S9-21, S9-24, S9-28)."""
    others = [s for s in out if s != serial]
    scope = {
        9: "the player is out of that day's promotion",
        21: "the ticket is out of play",
        24: "the person is out of the promotion",
        28: "the person is out of the promotion",
    }[rule]
    also = f"; also disqualified: {', '.join(others)}" if others else ""
    return f"ticket {serial} disqualified (rule {rule}): {scope}{also}"


class _MqttFeed:
    """Publishes feed messages under the site's feed prefix on a real broker."""

    def __init__(self, session: Any, site: str) -> None:
        self._session, self._site = session, site

    async def publish(self, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        from protocols.mqtt.topics import feed_topic

        await self._session.publish(
            feed_topic(self._site, topic), json.dumps(payload).encode(), retain=retain
        )


def _wheel(args: argparse.Namespace) -> int:
    from gateway.super9.desk.wheel import follow_wheel
    from protocols.wheel import Debouncer

    if args.confirmations < 1:
        raise OperatorError("--confirmations must be at least 1")

    def show(spin: SpinRecorded) -> None:
        state = "VOID (not called)" if spin.voided else f"called {spin.number}"
        done = f"; complete: {', '.join(spin.completed)}" if spin.completed else ""
        print(f"spin {spin.seq}: {state}{done}", flush=True)

    async def work(desk: Super9Desk) -> WheelRun:
        zone = ZoneInfo((await desk.settings()).timezone)
        return await follow_wheel(
            desk,
            args.session,
            args.url,
            clock=lambda: datetime.now(zone),
            max_results=args.max_results,
            on_spin=show,
            debouncer=Debouncer(args.confirmations),
        )

    run = _run(args, work)
    counts = dict(run.debouncer.counts)
    print(f"wheel stopped ({run.stopped_because or 'link closed'}); lines: {counts}")
    return 0


def _void(args: argparse.Namespace) -> int:
    seq = _run(
        args,
        lambda d: d.void_spin(
            args.session,
            game_no=args.game,
            seq=args.seq,
            actor=host_actor(),
            reason=args.reason,
            now=_now(args),
        ),
    )
    print(f"spin {seq} void (rule 18): its number is not called")
    return 0


def _manual(args: argparse.Namespace) -> int:
    spin = _run(
        args,
        lambda d: d.manual_spin(
            args.session,
            args.number,
            confirm_number=args.confirm,
            keyed_by=host_actor(),
            confirmed_by=second_name(args),
            reason=args.reason,
            game_no=args.game,
            now=_now(args),
        ),
    )
    done = f"; complete: {', '.join(spin.completed)}" if spin.completed else ""
    print(f"spin {spin.seq}: called {spin.number}{done}")
    return 0


def _claim(args: argparse.Namespace) -> int:
    claim = _run(
        args,
        lambda d: d.claim(
            args.session, args.ticket, args.duplicate, actor=host_actor(), now=_now(args)
        ),
    )
    data = {
        "ticket": claim.ticket,
        "valid": claim.valid,
        "complete": claim.complete,
        "reason": claim.reason,
    }
    if not claim.valid:
        text = f"claim VOID, ticket {claim.ticket} disqualified for the day: {claim.reason}"
    elif claim.complete:
        text = f"claim registered: ticket {claim.ticket} has all nine numbers"
    else:
        text = f"claim registered but ticket {claim.ticket}: {claim.reason}"
    return _print(args, data, text)


def _sign(args: argparse.Namespace) -> int:
    _run(
        args,
        lambda d: d.sign_prize(
            args.session,
            args.ticket,
            args.kind,
            signature=args.signature,
            witness=second_name(args),
            signer=args.signer,
            actor=host_actor(),
            now=_now(args),
        ),
    )
    print(f"{args.kind} prize of ticket {args.ticket}: receipt recorded (rule 26)")
    return 0


def _report(args: argparse.Namespace) -> int:
    report = _run(args, lambda d: d.report(args.session))
    result = report["result"]
    called = [s["number"] for s in report["spins"] if not s["voided"] and s["number"] is not None]
    lines = [
        f"session {report['session']} at {report['starts_at']} ({report['status']})",
        f"tickets in play {report['tickets']['in_play']}, "
        f"disqualified {report['tickets']['disqualified']}",
        f"spins {len(called)}: {' '.join(map(str, called)) or '-'}",
        f"voided games: {[s['game'] for s in report['spins'] if s['voided']] or '-'}",
        f"buy-ins {_rand(result['buy_ins_cents'])}, "
        f"consolation pool {_rand(result['consolation_pool_cents'])}, "
        f"jackpot in {_rand(result['jackpot_in_cents'])}",
    ]
    lines += [
        f"  {p['kind']:<12} ticket {p['ticket']}: {_rand(p['amount_cents'])}"
        for p in result["payouts"]
    ]
    lines.append(
        f"jackpot after: {_rand(result['jackpot_out_cents'])}"
        + ("" if report["status"] == "closed" else " (provisional)")
    )
    return _print(args, report, "\n".join(lines))


def _jackpot(args: argparse.Namespace) -> int:
    async def work(desk: Super9Desk) -> dict[str, Any]:
        data: dict[str, Any] = {"jackpot_cents": await desk.jackpot()}
        if args.history:
            data["history"] = await desk.jackpot_history()
        return data

    data = _run(args, work)
    lines = [f"progressive jackpot: {_rand(data['jackpot_cents'])}"]
    lines += [
        f"  {h['at'][:16]} {h['kind']:<18} {_rand(h['amount_cents']):>14} "
        f"-> {_rand(h['balance_cents'])}"
        for h in data.get("history", [])
    ]
    return _print(args, data, "\n".join(lines))
