"""The Reelgate MQTT topic tree, version 1 (``docs/mqtt.md``).

Everything lives under ``reelgate/v1/<site>/``::

    reelgate/v1/<site>/board/<machine>/status   board → gateway, retained, last will "offline"
    reelgate/v1/<site>/board/<machine>/state    board → gateway, retained
    reelgate/v1/<site>/board/<machine>/event    board → gateway, QoS 1
    reelgate/v1/<site>/board/<machine>/meters   board → gateway, retained (credit/meter report)
    reelgate/v1/<site>/board/<machine>/reply    board → gateway, QoS 1 (command replies)
    reelgate/v1/<site>/board/<machine>/cmd      gateway → board, QoS 1, never retained
    reelgate/v1/<site>/board/<machine>/card     board → gateway, QoS 1 (card-in, card-out)
    reelgate/v1/<site>/feed/...                 gateway → signage (see protocols.mqtt.feed)

The schema version is in the topic so that a v2 board and a v1 gateway never read each
other's payloads; every payload also carries ``"v": 1``.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

ROOT = "reelgate"
VERSION = 1
_PREFIX = f"{ROOT}/v{VERSION}"

# One topic level: no separators, no wildcards, nothing a sign's firmware would choke on.
_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class TopicError(ValueError):
    """A topic outside the v1 tree, or a site/machine name that cannot be a topic level."""


class Channel(enum.Enum):
    STATUS = "status"
    STATE = "state"
    EVENT = "event"
    METERS = "meters"
    REPLY = "reply"
    CMD = "cmd"
    CARD = "card"  # a player's card put in or pulled (docs/mqtt.md, "Player cards")


#: Channels a board publishes (the gateway subscribes to these).
BOARD_TO_GATEWAY = frozenset(
    {Channel.STATUS, Channel.STATE, Channel.EVENT, Channel.METERS, Channel.REPLY, Channel.CARD}
)
#: Channels retained by the broker, so a late subscriber gets the last value at once.
RETAINED = frozenset({Channel.STATUS, Channel.STATE, Channel.METERS})


def check_segment(kind: str, value: str) -> str:
    if not _SEGMENT.match(value):
        raise TopicError(
            f"{kind} {value!r} must be 1-64 characters of letters, digits, '_', '.' or '-'"
        )
    return value


def site_prefix(site: str) -> str:
    return f"{_PREFIX}/{check_segment('site', site)}"


def board_topic(site: str, machine: str, channel: Channel) -> str:
    return f"{site_prefix(site)}/board/{check_segment('machine', machine)}/{channel.value}"


def board_filter(site: str, channel: Channel | None = None) -> str:
    """Subscription filter for one channel of every board of a site (or all channels)."""
    return f"{site_prefix(site)}/board/+/{channel.value if channel else '+'}"


def feed_topic(site: str, relative: str) -> str:
    parts = relative.split("/")
    for part in parts:
        check_segment("feed topic level", part)
    return f"{site_prefix(site)}/feed/{relative}"


@dataclass(frozen=True, slots=True)
class BoardTopic:
    site: str
    machine: str
    channel: Channel


def parse_board_topic(topic: str) -> BoardTopic:
    parts = topic.split("/")
    if len(parts) != 6 or parts[0] != ROOT or parts[3] != "board":
        raise TopicError(f"not a board topic: {topic!r}")
    if parts[1] != f"v{VERSION}":
        raise TopicError(f"unsupported schema version {parts[1]!r} in {topic!r}")
    try:
        channel = Channel(parts[5])
    except ValueError:
        raise TopicError(f"unknown channel {parts[5]!r} in {topic!r}") from None
    return BoardTopic(
        site=check_segment("site", parts[2]),
        machine=check_segment("machine", parts[4]),
        channel=channel,
    )
