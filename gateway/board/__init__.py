"""The interface-board agent: one real EGM, spoken to over SAS, exposed over MQTT.

``reelgate board`` runs it on a small Linux board at the machine.  It speaks the v1
MQTT schema through the same :class:`protocols.mqtt.board.BoardCore` as the emulated
boards, so the gateway's MQTT driver cannot tell them apart:

* :mod:`~gateway.board.clock` — the board's clock, taken from the gateway (``set-clock``);
* :mod:`~gateway.board.egm` — the EGM behind the core: commands run on the SAS driver,
  state kept from the exceptions it reports;
* :mod:`~gateway.board.agent` — the running agent: SAS event loop plus the MQTT core.

See ``docs/mqtt.md`` (*The interface-board agent*).
"""
