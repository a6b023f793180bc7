"""The embedded MQTT broker (amqtt), an optional extra: ``pip install 'reelgate[embedded]'``.

Production uses the venue's broker (Mosquitto); amqtt is only for the zero-setup paths
(``reelgate demo --mqtt embedded``, ``reelgate emulate mqtt`` without ``--broker``) and
the tests.  When it is not installed those paths say so in one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway.errors import OperatorError

if TYPE_CHECKING:
    from protocols.mqtt.broker import EmbeddedBroker

EXTRA = "pip install 'reelgate[embedded]'"


def embedded_broker(option: str) -> type[EmbeddedBroker]:
    """The broker class, or one line naming the extra to install (``option`` is the
    option that asked for it)."""
    try:
        from protocols.mqtt.broker import EmbeddedBroker
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("amqtt"):
            raise
        raise OperatorError(
            f"{option}: the embedded MQTT broker (amqtt) is not installed: {EXTRA}, "
            "or name the venue's broker (mqtt://HOST:PORT)"
        ) from None
    return EmbeddedBroker
