"""The clock and the people of one write command, settled before its transaction.

:func:`preflight` runs first, in transactions of its own: it reads whether the database
is a training one (and says so on standard error), and authenticates the accounts the
command names — a director for a back-dated write (``--director``), and both people of
a dual-control action: the first (``--as``, recorded as the write's actor) and the second
(:data:`SECOND` on the parser), two different accounts.  The write's transaction then
asks :func:`write_time` for its time: the keyed ``--now`` judged by
:mod:`gateway.clocks.policy` against the real time taken here, and the verdict put in
every audit row the write makes (``details.clock``).

:data:`REAL_CLOCK` is the host clock; tests replace it to place "now" exactly.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.accounts.dual import APPROVERS
from gateway.accounts.roles import PERMISSIONS, Role
from gateway.accounts.service import Principal
from gateway.app.identity import host_login, sign_in
from gateway.app.people import authenticate
from gateway.app.second import SecondPerson as SecondPerson  # re-exported
from gateway.clocks.policy import WriteTime, judge
from gateway.errors import OperatorError
from storage import audit
from storage.database_mark import is_training


def _host_clock() -> datetime:
    return datetime.now(UTC)


REAL_CLOCK: Callable[[], datetime] = _host_clock
BANNER = "TRAINING database: rehearsal records, not a venue's; keyed times are free"


@dataclass
class Preflight:
    training: bool
    real: datetime
    director: Principal | None = None
    first: Principal | None = None  # a dual-control write's first person (--as)
    second: Principal | None = None
    time_asked: bool = False  # the write asked for its time (so --now was used)


_CURRENT: ContextVar[Preflight | None] = ContextVar("reelgate_write_preflight", default=None)


_SEEN = {"training": False}


def banner(training: bool) -> None:
    """Note a training database; the command line prints :data:`BANNER` on standard
    error when the command has succeeded (a refusal stays one line)."""
    if training:
        _SEEN["training"] = True


def take_banner() -> str | None:
    """The banner owed for this command, once (then forgotten)."""
    seen, _SEEN["training"] = _SEEN["training"], False
    return BANNER if seen else None


async def training_of(sessions: async_sessionmaker[AsyncSession]) -> bool:
    async with sessions() as session:
        return await is_training(session)


async def preflight(
    sessions: async_sessionmaker[AsyncSession], args: argparse.Namespace
) -> Preflight:
    """Settle the write's people and clock facts, and make them the current ones."""
    real = REAL_CLOCK()
    training = await training_of(sessions)
    banner(training)
    director = None
    if getattr(args, "director", None):
        roles = getattr(args, "director_roles", frozenset({Role.DIRECTOR}))
        director = await authenticate(sessions, "--director", args.director, roles=roles, now=real)
    first = second = None
    spec: SecondPerson | None = getattr(args, "second_person", None)
    if spec is not None and not getattr(args, spec.dest, None):
        raise OperatorError(
            f"{spec.option}: name the second person's account (dual control, "
            f"{spec.permission.value}); its password is asked"
        )
    if spec is not None:
        first, second = await _two_people(sessions, args, spec, real)
    found = Preflight(training, real, director, second=second, first=first)
    _CURRENT.set(found)
    return found


async def _two_people(
    sessions: async_sessionmaker[AsyncSession],
    args: argparse.Namespace,
    spec: SecondPerson,
    real: datetime,
) -> tuple[Principal, Principal]:
    """Both people of a dual-control write, each an account proven by its password: the
    first (``--as``) may make the write, the second approves it, and they differ (by
    account id, so no spelling of one name is two people).  The host login alone is not
    a person: it and an account of the same name were once both people at once (S9-29)."""
    if not getattr(args, "as_account", None):
        raise OperatorError(
            f"--as: name your own account (dual control, {spec.permission.value}: the "
            f"first person signs in too); its password is asked before {spec.option}'s"
        )
    first = await authenticate(
        sessions, "--as", args.as_account, roles=PERMISSIONS[spec.permission], now=real
    )
    second = await authenticate(
        sessions, spec.option, getattr(args, spec.dest), roles=APPROVERS[spec.permission],
        now=real,
    )  # fmt: skip
    if second.user_id == first.user_id:
        raise OperatorError(
            f"{spec.option} {second.name}: dual control needs a second person, not the "
            f"--as account; nothing saved"
        )
    sign_in(first.name)
    audit.ANNOTATION.set(
        {**(audit.ANNOTATION.get() or {}),
         "first_person": {"account": first.name, "role": first.role.value,
                          "host": host_login()},
         "second_person": {"account": second.name, "role": second.role.value,
                           "for": spec.permission.value}}
    )  # fmt: skip
    return first, second


def current() -> Preflight:
    found = _CURRENT.get()
    if found is None:  # a programming error: a write handler must run through run()
        raise RuntimeError("a write's time was asked for outside its preflight")
    return found


def second_name(args: argparse.Namespace) -> str:
    """The authenticated second person's account name."""
    who = current().second
    if who is None:  # preflight refuses a missing second person; kept for the type checker
        spec: SecondPerson = args.second_person
        raise RuntimeError(f"{spec.option} was not authenticated")
    return who.name


def write_time(keyed: datetime | None, reason: str | None) -> WriteTime:
    """The judged time of the current write; its facts go into every audit row."""
    p = current()
    p.time_asked = True
    write = judge(
        keyed,
        p.real,
        training=p.training,
        reason=reason,
        director=p.director.name if p.director else None,
    )
    facts = write.audit_facts()
    if facts is not None:
        audit.ANNOTATION.set({**(audit.ANNOTATION.get() or {}), "clock": facts})
    return write


def check_keyed_time_used(args: argparse.Namespace) -> None:
    """Refuse a ``--now`` (or ``--director``) the command never used: its rows carry the
    real time, and a keyed time silently dropped would mislead whoever keyed it."""
    p = current()
    if p.time_asked:
        return
    for option, dest in (("--now", "now"), ("--director", "director")):
        if getattr(args, dest, None):
            raise OperatorError(
                f"{option}: this command records the real time and takes no keyed time; "
                "nothing saved"
            )


def keyed_field(keyed: datetime, option: str, reason: str | None) -> datetime:
    """A time keyed in an option of its own (``--announced-at``, ``--received-at``):
    held to the same rules as ``--now`` — a notice or a form dated after the fact is a
    back-dated record (T10b notice, T16e forms) — and recorded beside the write's clock."""
    p = current()
    write = judge(
        keyed,
        p.real,
        training=p.training,
        reason=reason,
        director=p.director.name if p.director else None,
        option=option,
    )
    facts = write.audit_facts()
    if facts is not None:
        audit.ANNOTATION.set({**(audit.ANNOTATION.get() or {}), f"clock {option}": facts})
    return write.at
