"""The floor: tournament banks and their machines.

:mod:`~gateway.floor.model` is the floor file and its validation (pure);
:mod:`~gateway.floor.snmp` the boards' SNMP agents and their secrets;
:mod:`~gateway.floor.store` the floor in the database and the technician's changes.
"""
