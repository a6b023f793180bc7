"""The signage boards of the gateway (``docs/signage.md``), served by FastAPI like the API.

Wiring it into a process that runs heats (``reelgate serve`` / ``reelgate demo``)::

    from gateway.web import FanoutFeed, start_signage

    feed = FanoutFeed(mqtt_feed)        # or FanoutFeed() with no broker at all
    signage = await start_signage(feed, "127.0.0.1", 8080)   # port 0: any free port
    print(f"signage on {signage.url}")
    ...  # pass ``feed`` wherever a FeedPublisher is wanted (heat runner, Super 9 desk);
         # for LiveHeatFeed-style progress topics, publish through ``feed`` as well
    await signage.close()

or add the boards to an existing FastAPI app (the API's) with
``gateway.web.signage.mount_signage(app, feed, settings)``.

``FanoutFeed.publish`` keeps the last retained value per topic and pushes every message
to the connected pages before handing it to the wrapped publisher, so the page shows it
even if the broker is away.  ``reelgate signage`` runs the same boards on any machine,
fed by the site's MQTT feed tree (:mod:`gateway.web.mqtt_source`) or the gateway's API
(:mod:`gateway.web.signage.api_source`).
"""

from gateway.web.fanout import FanoutFeed, FeedPayloadError
from gateway.web.signage.server import SignageServer, start_signage
from gateway.web.signage.settings import SignageSettings

__all__ = ["FanoutFeed", "FeedPayloadError", "SignageServer", "SignageSettings", "start_signage"]
