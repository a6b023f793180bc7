"""Heats on the floor: the state machine, its journal writer, the runner, the links.

Public surface: :class:`~gateway.heats.runner.HeatRunner` (run or resume one heat),
:class:`~gateway.heats.spool.JournalWriter` (journal writes that survive a database
outage), :class:`~gateway.heats.links.MachineLink` (a driver with tenacity retries),
:mod:`~gateway.heats.hooks` (the tournament seam and progress notes) and
:mod:`~gateway.heats.states` (the transition table).  Recovery after a crash is
:mod:`gateway.recovery`; the schedule is :mod:`gateway.scheduler`.
"""
