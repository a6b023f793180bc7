"""The Super 9 roulette promotion (rules sheet: ``shared/rules/super9-roulette-promotion.txt``).

:mod:`gateway.super9.rules` is pure (no database, time passed in): the calendar
(S9-4 to S9-6), tickets (S9-8, S9-9), the draw engine (S9-12, S9-13, S9-19), settlement
(S9-14 to S9-16, S9-20) and the settings.  :mod:`gateway.super9.desk` is every operator
action, stored and audited (:class:`~gateway.super9.desk.Super9Desk`), and the wheel
feed to spins (:func:`~gateway.super9.desk.wheel.follow_wheel`).

Clauses: docs/rules.md, one anchor per clause (#s9-1 … #s9-32).
"""
