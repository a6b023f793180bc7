"""The signage / leaderboard web page of the gateway (``docs/signage.md``).

Wiring it into a process that runs heats (``reelgate serve`` / ``reelgate demo``)::

    from gateway.web import FanoutFeed, start_signage

    feed = FanoutFeed(mqtt_feed)        # or FanoutFeed() with no broker at all
    signage = await start_signage(feed, "127.0.0.1", 8080)   # port 0: any free port
    print(f"signage on {signage.url}")
    ...  # pass ``feed`` wherever a FeedPublisher is wanted (heat runner, Super 9 desk);
         # for LiveHeatFeed-style progress topics, publish through ``feed`` as well
    await signage.close()

``FanoutFeed.publish`` keeps the last retained value per topic and pushes every message
to the connected pages before handing it to the wrapped publisher, so the page shows it
even if the broker is away.  ``reelgate signage`` runs the same page on any machine,
fed by a subscription to the site's MQTT feed tree (:mod:`gateway.web.mqtt_source`).
"""

from gateway.web.fanout import FanoutFeed, FeedPayloadError
from gateway.web.server import SignageServer, make_app, start_signage

__all__ = ["FanoutFeed", "FeedPayloadError", "SignageServer", "make_app", "start_signage"]
