"""Metrics, health and the systemd watchdog of a running Reelgate process.

:mod:`.loop` watches the event loop (liveness); :mod:`.checks` are the readiness checks
(database, spool, broker, banks' links, recovery); :mod:`.metrics` reads the gateway's
own counters into Prometheus at scrape time; :mod:`.ops` assembles them for the HTTP
endpoints (:mod:`gateway.web.api.ops`); :mod:`.systemd` speaks sd_notify; :mod:`.serving`
puts them around a running gateway (``reelgate serve``).
"""
