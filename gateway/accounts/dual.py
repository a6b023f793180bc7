"""Dual control: the actions one person asks for and a second, different person approves.

The first account's request becomes a pending action; it runs only when an account that
is not the requester (compared by user id: names are normalised at creation, so
``Dealer`` and ``dealer `` are the same account) and whose role is in :data:`APPROVERS`
approves it.  Only an account that could approve it — or the requester, withdrawing it —
may reject it.  Approval re-checks the requester: the write runs under the requester's
name, so a requester since disabled (or whose role lost the permission) voids it.  Every
step is audited.  Pure: no database.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.accounts.roles import PERMISSIONS, Permission, Role

R = Role

# permission -> roles that may approve it (the requester's role comes from PERMISSIONS).
APPROVERS: dict[Permission, frozenset[Role]] = {
    Permission.HEAT_MANUAL_SCORE: frozenset({R.DIRECTOR, R.SUPERVISOR}),
    Permission.ENTRY_REFUND: frozenset({R.SUPERVISOR, R.DIRECTOR}),
    Permission.TOURNAMENT_SETTINGS: frozenset({R.DIRECTOR}),
    Permission.PLAYER_REINSTATE: frozenset({R.DIRECTOR, R.SUPERVISOR}),
    # Super 9: the approver is the rule's second person — who confirms a manual spin
    # (rule 29), the Promotion Director signing off a number change (rule 23), the staff
    # witness of a prize receipt (rule 26).
    Permission.SUPER9_MANUAL_SPIN: frozenset({R.SUPERVISOR, R.PROMOTION_DIRECTOR}),
    Permission.SUPER9_NUMBERS: frozenset({R.PROMOTION_DIRECTOR}),
    Permission.SUPER9_PRIZE_RECEIPT: frozenset({R.SUPERVISOR, R.PROMOTION_DIRECTOR}),
    # T15: the witness of a tournament prize payout is the approving account.
    Permission.TOURNAMENT_PRIZE_RECEIPT: frozenset({R.SUPERVISOR, R.DIRECTOR}),
    # HS7: so is the witness of a hot-seat prize payout.
    Permission.HOTSEAT_PRIZE_RECEIPT: frozenset({R.SUPERVISOR, R.DIRECTOR}),
    # H12: and of a team prize payout.
    Permission.TEAM_PRIZE_RECEIPT: frozenset({R.SUPERVISOR, R.DIRECTOR}),
}


def is_dual(permission: Permission) -> bool:
    return permission in APPROVERS


@dataclass(frozen=True)
class Decider:
    user_id: int
    role: Role


class DualControlRefused(Exception):
    """An approval the dual-control rule refuses; the message says which part."""


class DualControlForbidden(DualControlRefused):
    """A decision the account's role may not take at all (403 over the API)."""


def check_approval(
    permission: Permission, *, requester_id: int, approver: Decider, status: str
) -> None:
    """Refuse unless a second, entitled person approves a still-pending action."""
    if status != "pending":
        raise DualControlRefused(f"dual control: the action is {status}, not pending")
    if approver.user_id == requester_id:
        raise DualControlRefused(
            "dual control: a second person must approve; the requester cannot approve"
        )
    roles = APPROVERS.get(permission)
    if roles is None:
        raise DualControlRefused(f"dual control: {permission.value} needs no approval")
    if approver.role not in roles:
        needed = ", ".join(sorted(r.value for r in roles))
        raise DualControlRefused(
            f"dual control: {permission.value} must be approved by {needed}, "
            f"not {approver.role.value}"
        )


def check_requester(permission: Permission, *, name: str, role: Role, disabled: bool) -> None:
    """Refuse to run an action whose requester has since lost the right to ask for it:
    an approval runs the write under the requester's name, so that name must still be
    an enabled account whose role may make it."""
    if disabled:
        raise DualControlRefused(f"dual control: requester {name} is disabled; the action is void")
    if role not in PERMISSIONS[permission]:
        raise DualControlRefused(
            f"dual control: requester {name} ({role.value}) may no longer ask for "
            f"{permission.value}"
        )


def check_rejection(
    permission: Permission, *, requester_id: int, rejecter: Decider, status: str
) -> None:
    """Refuse a rejection unless the rejecter could approve the action, or is the requester
    withdrawing it: a read-only auditor or a dealer must not be able to block a refund."""
    if status != "pending":
        raise DualControlRefused(f"dual control: the action is {status}, not pending")
    if rejecter.user_id == requester_id:
        return
    roles = APPROVERS.get(permission, frozenset())
    if rejecter.role not in roles:
        needed = ", ".join(sorted(r.value for r in roles))
        raise DualControlForbidden(
            f"dual control: only {needed} or the requester may reject {permission.value}, "
            f"not {rejecter.role.value}"
        )
