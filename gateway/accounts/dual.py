"""Dual control: the actions one person asks for and a second, different person approves.

The first account's request becomes a pending action; it runs only when an account that
is not the requester (compared by user id: names are normalised at creation, so
``Dealer`` and ``dealer `` are the same account) and whose role is in :data:`APPROVERS`
approves it.  Both steps are audited.  Pure: no database.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.accounts.roles import Permission, Role

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
}


def is_dual(permission: Permission) -> bool:
    return permission in APPROVERS


@dataclass(frozen=True)
class Decider:
    user_id: int
    role: Role


class DualControlRefused(Exception):
    """An approval the dual-control rule refuses; the message says which part."""


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
