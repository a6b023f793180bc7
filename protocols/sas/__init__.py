"""SAS 6.02 sans-I/O core: CRC, BCD, 9-bit escaping, poll table, messages, framers, link.

Nothing here does I/O or reads a clock.  Carriers (TCP, serial, in-memory) live in
``protocols.sas.carriers`` and move the *escaped* byte stream described in
:mod:`protocols.sas.wire` (``FF 00 b`` = wakeup byte, ``FF FF`` = data FF).

How to use
----------
Host, one poll at a time, by hand::

    from protocols.sas import ReplyParser, SendCurrentCredits, encode_host_message

    parser = ReplyParser()
    poll = SendCurrentCredits(addr=1)
    carrier.write(encode_host_message(poll))   # b"\\xff\\x00\\x01\\x1a"
    parser.expect(poll)
    for event in parser.feed(received_bytes):  # any split; call again with more bytes
        ...  # CurrentCreditsReply(addr=1, credits=1234) | Nack | Busy | ProtocolError
    parser.gap()  # after 5 ms of silence: settles a lone ACK byte / a cut reply

EGM (emulator) side::

    from protocols.sas import HostFrameParser, encode_egm_message, CurrentCreditsReply

    parser = HostFrameParser(address=1)
    for event in parser.feed(received_bytes):
        # GeneralPoll | a LongPoll subclass | OtherAddress (implied ACK) | ProtocolError
        ...
    carrier.write(encode_egm_message(CurrentCreditsReply(1, 1234)))

With timing, retries, implied ACK, exception queue and chirps handled for you, use the
link state machines in :mod:`protocols.sas.link` (h11 style, ``now`` passed in)::

    host = HostLink(LinkSettings(reply_timeout=0.050))  # one per loop / carrier
    carrier.write(host.send(SendCurrentCredits(1), now))  # LinkStateError if busy
    host.receive_data(data, now)          # on every carrier read
    host.handle_timers(now)               # at host.next_deadline()
    carrier.write(host.data_to_send())    # retries go out here
    while (ev := host.next_event()) is not None:
        ...  # PollReply(poll, reply, tries) | PollFailed | Retrying | Chirp | ProtocolError

    egm = EgmLink(address=1, handler=machine_face, now=now)  # handle(poll) -> reply|None
    egm.post_exception(0x7E)              # general polls are answered from this queue
    egm.receive_data(data, now); egm.handle_timers(now)  # at egm.next_deadline()
    carrier.write(egm.data_to_send())     # replies, resends, chirps
    # events: PollHandled | ExceptionAcked | LinkDown | LinkUp | ProtocolError

Frames without escaping: ``msg.encode()``; ``decode_host_frame(frame)`` and
``decode_reply(frame, poll)`` raise typed :class:`ProtocolError` subclasses.
LP 8C's layout is an assumption [A] isolated in :mod:`protocols.sas.tournament_layout`.
Real-time event reporting (LP 0E, event frames ``addr FF code data CRC``) is in
:mod:`protocols.sas.real_time`.
"""

from protocols.sas.aft import (
    AftInterrogate,
    AftLockCode,
    AftLockRequest,
    AftLockStatus,
    AftReceiptStatus,
    AftStatusReply,
    AftTransfer,
    AftTransferCode,
    AftTransferReply,
    AftTransferStatus,
    AftTransferType,
    TransferOutcome,
    describe_transfer_status,
    transfer_outcome,
)
from protocols.sas.aft_registration import (
    AftRegister,
    AftRegistrationCode,
    AftRegistrationReply,
    AftRegistrationStatus,
    describe_registration_status,
)
from protocols.sas.bcd import bcd_decode, bcd_encode
from protocols.sas.codec import (
    HOST_MESSAGES,
    REPLIES,
    decode_host_frame,
    decode_reply,
    encode_egm_message,
    encode_host_message,
)
from protocols.sas.crc import append_crc, check_crc, crc16_kermit, crc_bytes
from protocols.sas.errors import (
    BcdError,
    CrcError,
    EscapeError,
    FieldError,
    LengthError,
    LinkStateError,
    ProtocolError,
    SasError,
    TruncatedFrameError,
    UnexpectedReplyError,
    UnknownPollError,
)
from protocols.sas.exception_codes import SasException, describe_exception
from protocols.sas.framer import HostFrameParser, OtherAddress, ReplyParser, TrailingBytes
from protocols.sas.link import (
    EGM_TRANSITIONS,
    HOST_TRANSITIONS,
    SYNC,
    EgmHandler,
    EgmLink,
    EgmState,
    ExceptionAcked,
    ExceptionQueue,
    HostLink,
    HostState,
    LinkDown,
    LinkEvent,
    LinkSettings,
    LinkUp,
    PollFailed,
    PollHandled,
    PollReply,
    Retrying,
)
from protocols.sas.messages import (
    TOURNAMENT_METER_CODES,
    Ack,
    Busy,
    Chirp,
    CurrentCreditsReply,
    DataReply,
    DateTimeReply,
    EgmMessage,
    EnabledFeaturesReply,
    ExceptionReply,
    FieldQuirk,
    GamingMachineMetersReply,
    GeneralPoll,
    HostMessage,
    LongPoll,
    MachineInfoReply,
    MetersReply,
    Nack,
    RemoteHandpayReset,
    SelectedMetersReply,
    SendCurrentCredits,
    SendDateTime,
    SendEnabledFeatures,
    SendGamingMachineMeters,
    SendMachineInfo,
    SendMeters,
    SendSelectedMeters,
    SendTournamentMeter,
    SendTournamentMeters,
    SendVersion,
    SetDateTime,
    Shutdown,
    Startup,
    TournamentMeterReply,
    TournamentMetersReply,
    TournamentMode,
    VersionReply,
)
from protocols.sas.polls import POLLS, PollSpec, PollType, ReplyKind
from protocols.sas.real_time import (
    REAL_TIME_DATA_LENGTHS,
    RealTimeEvent,
    RealTimeReporting,
    decode_real_time,
)
from protocols.sas.wire import Chunk, StreamDecoder, escape

__all__ = [
    "EGM_TRANSITIONS",
    "HOST_MESSAGES",
    "HOST_TRANSITIONS",
    "POLLS",
    "REAL_TIME_DATA_LENGTHS",
    "REPLIES",
    "SYNC",
    "TOURNAMENT_METER_CODES",
    "Ack",
    "AftInterrogate",
    "AftLockCode",
    "AftLockRequest",
    "AftLockStatus",
    "AftReceiptStatus",
    "AftRegister",
    "AftRegistrationCode",
    "AftRegistrationReply",
    "AftRegistrationStatus",
    "AftStatusReply",
    "AftTransfer",
    "AftTransferCode",
    "AftTransferReply",
    "AftTransferStatus",
    "AftTransferType",
    "BcdError",
    "Busy",
    "Chirp",
    "Chunk",
    "CrcError",
    "CurrentCreditsReply",
    "DataReply",
    "DateTimeReply",
    "EgmHandler",
    "EgmLink",
    "EgmMessage",
    "EgmState",
    "EnabledFeaturesReply",
    "EscapeError",
    "ExceptionAcked",
    "ExceptionQueue",
    "ExceptionReply",
    "FieldError",
    "FieldQuirk",
    "GamingMachineMetersReply",
    "GeneralPoll",
    "HostFrameParser",
    "HostLink",
    "HostMessage",
    "HostState",
    "LengthError",
    "LinkDown",
    "LinkEvent",
    "LinkSettings",
    "LinkStateError",
    "LinkUp",
    "LongPoll",
    "MachineInfoReply",
    "MetersReply",
    "Nack",
    "OtherAddress",
    "PollFailed",
    "PollHandled",
    "PollReply",
    "PollSpec",
    "PollType",
    "ProtocolError",
    "RealTimeEvent",
    "RealTimeReporting",
    "RemoteHandpayReset",
    "ReplyKind",
    "ReplyParser",
    "Retrying",
    "SasError",
    "SasException",
    "SelectedMetersReply",
    "SendCurrentCredits",
    "SendDateTime",
    "SendEnabledFeatures",
    "SendGamingMachineMeters",
    "SendMachineInfo",
    "SendMeters",
    "SendSelectedMeters",
    "SendTournamentMeter",
    "SendTournamentMeters",
    "SendVersion",
    "SetDateTime",
    "Shutdown",
    "Startup",
    "StreamDecoder",
    "TournamentMeterReply",
    "TournamentMetersReply",
    "TournamentMode",
    "TrailingBytes",
    "TransferOutcome",
    "TruncatedFrameError",
    "UnexpectedReplyError",
    "UnknownPollError",
    "VersionReply",
    "append_crc",
    "bcd_decode",
    "bcd_encode",
    "check_crc",
    "crc16_kermit",
    "crc_bytes",
    "decode_host_frame",
    "decode_real_time",
    "decode_reply",
    "describe_exception",
    "describe_registration_status",
    "describe_transfer_status",
    "encode_egm_message",
    "encode_host_message",
    "escape",
    "transfer_outcome",
]
