"""The /api/v1 routers, one per desk area.  Every route names its permission in the
OpenAPI document (``x-permission``, ``x-dual-control``) so tests are generated from it."""

from __future__ import annotations

from typing import Any

from gateway.accounts.dual import is_dual
from gateway.accounts.roles import Permission


def needs(permission: Permission) -> dict[str, Any]:
    return {"x-permission": permission.value, "x-dual-control": is_dual(permission)}
