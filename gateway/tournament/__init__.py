"""The slot tournament rules engine (rules sheet: ``shared/rules/slots-reel-tournament.txt``).

Layers
------
* :mod:`gateway.tournament.rules` — pure T1–T23: frozen values in, decisions or a
  :class:`~gateway.tournament.rules.RuleViolation` ("rule N: ...") out; time is passed in.
* :mod:`gateway.tournament.settings` — what the sheet leaves to the casino (validity mode
  same-day vs 48h, packages, semi-final size, final quota, prize places, the T20
  "reasonable period", the T10 notice, what the start does to a seat the T22
  roll call left unmarked).
* :mod:`gateway.tournament.services` — async functions over an ``AsyncSession``: they load
  state, validate with the pure rules *before* writing, write, and audit every change a
  person makes (``storage.audit``) in the same transaction.  They never commit: wrap a
  call in :func:`~gateway.tournament.services.unit_of_work` (or your own transaction) so a
  refused action rolls back whole.
* ``gateway/commands/{tournament,players,entries,heats}.py`` — the director's and the
  cashier's CLI over the services.

Interface for the heat runner (``gateway.heats``)
-------------------------------------------------
All in :mod:`gateway.tournament.services`; ``at``/``now`` are aware datetimes.

``heat_seats(session, heat_id) -> list[SeatInfo]``
    The heat's live seats in seat order: seat id and number, machine id, entry, holder,
    who plays it (proxy name in final stages), status, credits if scored.
``playing_at_start(session, heat_id) -> list[SeatInfo]``
    The seats that would play if the heat started now: the machines to arm.  Seats not
    counted present by the roll call (T22), extra final seats without a proxy form
    (T16) and disqualified players' seats (T2) are left out, so their machines
    are never armed, unlocked or scored.
``begin_heat(session, heat_id, present_seats=None, at=..., actor=...) -> list[int]``
    The announced start: absent seats forfeit (T22), extra final-stage seats without
    a proxy form forfeit (T16), disqualified players' seats drop out (T2); the
    heat goes ``running``.  Accepts a heat that is scheduled, armed or restarted.
    ``present_seats`` is a head count at the start; ``None`` lets the roll call decide.
``mark_attendance(session, heat_id, seat_numbers, present=..., at=..., actor=...)`` /
``roll_call(session, heat_id) -> RollCall``
    T22 roll call, open until the start (and again before a restart): a floor
    attendant marks seats present or absent (audited; the latest mark stands).  The
    tournament setting ``unmarked_at_start`` decides an unmarked seat: ``auto`` (default:
    forfeit only if the heat had a roll call at all, else present, so venues without a
    roll call keep working), ``forfeit`` or ``present``.  A postponed heat's marks are
    cleared; a director's reinstatement (T23) marks the seat present.
``record_machine_score(session, seat_id, HeatScore, at=...) -> Score``
    The machine's end-of-heat credits and meters for a seat (T12).  Idempotent:
    the same score twice is a no-op; a different one raises (a change is a director's
    ``enter_manual_score`` with a reason, T23).
``mark_seat_malfunctioned(session, seat_id, at=..., actor=..., reason=..., negligence=False)``
    T20 (qualifying): moved to the first free seat of a future qualifying heat, else
    refunded.  T21 (final stages): first free seat in a later heat of the stage,
    else the seat waits for an added heat (``schedule_heat(..., announced_via=...)`` then
    ``seat_waiting_in_added_heat``, seat numbers by draw).  ``negligence=True``:
    disqualified, buy-in forfeited.  Returns a ``MalfunctionResult``.
``restart_heat(session, heat_id, failed_at=..., now=..., actor=..., reason=...)``
    T20 tournament-system failure: the whole heat restarts (status ``restarted``,
    ``restarts`` + 1, scores discarded into the audit log, seats kept).  Refused once the
    failure is older than ``postpone_after``: then ``postpone_heat``.
``postpone_heat(session, heat_id, now=..., actor=..., reason=...)``
    T20/T21: status ``postponed``, seats kept; ``reschedule_heat`` sets the new time
    (announced, T10).  ``handle_system_failure`` picks restart or postpone from when
    the difficulties *began*; a heat whose attempt failed before its start is left due
    (nothing to void) within the period and postponed after it.  The gateway dates the
    failure from its journal (``gateway.tournament.bridge.failure_began``, by the rule
    ``rules.incidents.difficulties_began``).
``finish_heat(session, heat_id, at=..., actor=...)``
    Closes a heat once every seat in play has a score.

Ranking: ``stage_standings`` (every single entry of a stage, ranked in Python; ties
broken only by recorded card draws, T19), ``top_standings`` (the live top N with the
boundary tie whole, from SQL window functions in ``storage.ranking`` placed by
``services.live_standings``; the season test
checks the two agree) and ``qualifiers`` (T13, T14, T17 and prize places).

Settings (``load_settings`` / ``store_settings`` in ``services.common``) live in the
``tournaments`` row, ``tournament_settings``, ``tournament_packages`` and
``tournament_attendance`` (T22, ``storage.attendance``); the audit log records each
change but is never read back as their source.

Clauses: docs/rules.md, one anchor per clause (#t1 … #t27).
"""
