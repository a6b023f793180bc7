"""Request and response bodies of the technician's endpoints (``/api/v1/banks/...``,
``/api/v1/machines/...``), bounded to the floor's columns (:mod:`storage.floor`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from gateway.floor.model import NAME_PATTERN
from gateway.web.api.models import BIG, Body, Finding

BANK_PATTERN = r"^[A-Za-z0-9_.:-]{1,32}$"
BankName = Annotated[str, Field(pattern=BANK_PATTERN)]
MachineName = Annotated[str, Field(pattern=NAME_PATTERN.pattern)]
# The driver parses it before anything is stored (gateway.machines.registry).
Endpoint = Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[a-z][a-z0-9+.-]*://\S+$")]
SnmpUri = Annotated[str, Field(min_length=1, max_length=512, pattern=r"^\S+$")]
AftKey = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^\S+$")]


class AftOut(BaseModel):
    asset_number: int
    registered: bool
    status: str
    pos_id: int | None
    reason: str | None


class MachineCheckOut(BaseModel):
    """One machine's preflight (``reelgate bank check``): ready when nothing blocks it."""

    machine: str
    ready: bool
    blockers: list[str]  # why it is blocked, in the CLI's words
    answers: bool
    tournament: str | None  # native | host-timed
    credits: int | None
    conditions: list[str]
    health: list[str]
    clock_offset_s: float | None
    clock_set: bool
    aft: AftOut | None


class BankCheckOut(BaseModel):
    bank: str
    ready: bool  # every machine checked is ready
    machines: list[MachineCheckOut]


class EnableIn(Body):
    """Machines left out of the bank, each with its own reason (``--exclude --reason``)."""

    exclude: Annotated[dict[MachineName, Finding], Field(default_factory=dict, max_length=200)]


class DisableOut(BaseModel):
    bank: str
    back_in_play: dict[str, bool]  # machine -> back in normal play
    stuck: list[str]  # machines NOT back in normal play (see them on the floor)


class AddMachineIn(Body):
    machine: MachineName
    endpoint: Endpoint  # e.g. sas+tcp://10.0.0.5:4001?address=1
    # Its board's SNMP agent: udp://host:port?user=U (v3) or ?version=2c; secrets go in
    # the SNMP secrets file, never here (refused: it would be stored).
    snmp: SnmpUri | None = None
    aft_registration_key: AftKey | None = None  # 40 hex digits, with aft_pos_id
    aft_pos_id: Annotated[int, Field(ge=0, le=BIG)] | None = None  # 1..4294967295


class MoveMachineIn(Body):
    to: BankName | None = None  # the bank it moves to
    endpoint: Endpoint | None = None  # its new endpoint


class MachineOut(BaseModel):
    machine: str
    bank: str
    position: int
    endpoint: str
    snmp: str | None
    aft_pos_id: int | None
