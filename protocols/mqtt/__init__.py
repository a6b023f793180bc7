"""MQTT for networked interface boards and the live signage feed.

* :mod:`~protocols.mqtt.topics` — the versioned topic tree (``reelgate/v1/<site>/...``);
* :mod:`~protocols.mqtt.codec` — sans-I/O payload codec with validation on receipt;
* :mod:`~protocols.mqtt.client` — the self-healing aiomqtt session (QoS 1, resync);
* :mod:`~protocols.mqtt.broker` — the embedded amqtt broker (zero-setup default);
* :mod:`~protocols.mqtt.feed` — the live tournament feed (FeedPublisher over MQTT).

See ``docs/mqtt.md``.
"""

from protocols.mqtt.codec import (
    BoardEventKind,
    Card,
    CardAction,
    Command,
    CommandMessage,
    ErrorKind,
    Event,
    Meters,
    PayloadError,
    Reply,
    State,
    Status,
    TournamentView,
    decode,
    encode,
)
from protocols.mqtt.topics import Channel, TopicError, board_topic, feed_topic, parse_board_topic

__all__ = [
    "BoardEventKind",
    "Card",
    "CardAction",
    "Channel",
    "Command",
    "CommandMessage",
    "ErrorKind",
    "Event",
    "Meters",
    "PayloadError",
    "Reply",
    "State",
    "Status",
    "TopicError",
    "TournamentView",
    "board_topic",
    "decode",
    "encode",
    "feed_topic",
    "parse_board_topic",
]
