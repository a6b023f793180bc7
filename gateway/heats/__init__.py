"""Heats on the floor: the state machine, its journal writer, the runner, recovery, the
scheduler and the supervision of banks between heats.

Public surface: :class:`~gateway.heats.runner.HeatRunner` (run or resume one heat),
:class:`~gateway.heats.spool.JournalWriter` (journal writes that survive a database
outage), :mod:`~gateway.heats.hooks` (the tournament seam and progress notes),
:mod:`~gateway.heats.states` (the transition table), :mod:`~gateway.heats.recovery`
(restart after a crash) and :mod:`~gateway.heats.scheduler` (heats from the schedule).
Machines are reached only through :mod:`gateway.machines`.
"""
