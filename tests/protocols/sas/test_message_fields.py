"""Bad field values give a typed error, never another exception.

Every message type is built from arbitrary values of its fields' types (out-of-range
integers, non-ASCII text, odd-length bytes, any date): building and encoding it either
works — and then the frame decodes back to the same message — or raises
:class:`ProtocolError` (a ``FieldError`` or ``BcdError``, both also ``ValueError``).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import protocols.sas as sas
from protocols.sas import (
    HOST_MESSAGES,
    REPLIES,
    HostFrameParser,
    ProtocolError,
    ReplyParser,
    encode_egm_message,
    encode_host_message,
)

from .test_messages_roundtrip import _poll_for

ints = st.one_of(st.integers(-(2**40), 2**40), st.integers(0, 255), st.integers(0, 127))
_BY_TYPE: dict[str, st.SearchStrategy[Any]] = {
    "int": ints,
    "bool": st.booleans(),
    "str": st.text(max_size=44),
    "bytes": st.binary(max_size=44),
    "dt.datetime": st.datetimes(),
    "dt.datetime | None": st.none() | st.datetimes(),
    "tuple[int, ...]": st.lists(ints, max_size=12).map(tuple),
    "tuple[tuple[int, int], ...]": st.lists(st.tuples(ints, ints), max_size=12).map(tuple),
    # display-only fields kept as received (protocols.sas.messages, FieldQuirk)
    "tuple[FieldQuirk, ...]": st.lists(
        st.builds(
            sas.FieldQuirk,
            st.sampled_from(["base percent", "game ID", "serial number", "credits"]),
            st.binary(max_size=8),
            st.sampled_from(["is not ASCII", "is not ASCII digits"]),
        ),
        max_size=2,
    ).map(tuple),
}
CLASSES = sorted(
    set(HOST_MESSAGES.values())
    | set(REPLIES.values())
    | {sas.GeneralPoll, sas.Ack, sas.Nack, sas.Busy, sas.Chirp, sas.ExceptionReply},
    key=lambda c: c.__name__,
)


def _attempt(cls: type) -> st.SearchStrategy[tuple[type, dict[str, Any]]]:
    kwargs = {f.name: _BY_TYPE[str(f.type)] for f in fields(cls)}
    return st.tuples(st.just(cls), st.fixed_dictionaries(kwargs))


attempts = st.one_of([_attempt(c) for c in CLASSES])


def test_every_field_type_has_a_strategy() -> None:
    for cls in CLASSES:
        assert {str(f.type) for f in fields(cls)} <= set(_BY_TYPE), cls.__name__


@settings(max_examples=1500)
@given(attempts)
def test_bad_field_values_give_typed_errors(attempt: tuple[type, dict[str, Any]]) -> None:
    cls, kwargs = attempt
    try:
        msg = cls(**kwargs)
        if isinstance(msg, sas.HostMessage):
            wire = encode_host_message(msg)
        else:
            wire = encode_egm_message(msg)
    except ProtocolError as exc:
        assert isinstance(exc, ValueError)  # noqa: PT017
        assert str(exc)  # one clear message  # noqa: PT017
        return
    # Accepted: then it must survive the wire unchanged.
    if msg == sas.GeneralPoll(0):  # the sync byte: an implied ACK for everyone
        assert HostFrameParser(None).feed(wire) == [sas.OtherAddress(0)]
    elif isinstance(msg, sas.HostMessage):
        assert HostFrameParser(None).feed(wire) == [msg]
    elif isinstance(msg, sas.Chirp):
        assert ReplyParser().feed(wire) == [msg]
    else:
        parser = ReplyParser()
        parser.expect(_poll_for(msg))
        assert [*parser.feed(wire), *parser.gap()] == [msg]


@given(st.integers(1, 127))
def test_chirp_round_trip(addr: int) -> None:
    """Loop break (sas.md §1): the EGM's address with the wakeup bit, seen while idle."""
    assert ReplyParser().feed(encode_egm_message(sas.Chirp(addr))) == [sas.Chirp(addr)]
