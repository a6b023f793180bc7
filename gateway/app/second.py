"""Which option of a dual-control command names its second person: set on the parser
(:func:`gateway.app.options.add_second`), read by :func:`gateway.app.keyed.preflight`.
A leaf, so a parser needs no database layer and the two never import each other."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.accounts.roles import Permission


@dataclass(frozen=True)
class SecondPerson:
    permission: Permission
    dest: str
    option: str
