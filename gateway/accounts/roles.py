"""The roles and the ONE permission table (docs/roles.md shows the same table).

Every HTTP endpoint and every account command names a :class:`Permission`; a role may use
it when the role is in :data:`PERMISSIONS`.  Dual-control permissions (:mod:`.dual`) are
requested by a role listed here and approved by a role listed in ``dual.APPROVERS``.
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    TECHNICIAN = "technician"
    DIRECTOR = "director"
    PROMOTION_DIRECTOR = "promotion-director"
    CASHIER = "cashier"
    DESK = "desk"  # guest relations
    DEALER = "dealer"
    SUPERVISOR = "supervisor"
    AUDITOR = "auditor"  # read-only
    ADMIN = "admin"  # accounts only: separation of duties keeps admins off the floor


class Permission(StrEnum):
    TOURNAMENT_READ = "tournament.read"
    TOURNAMENT_CREATE = "tournament.create"
    TOURNAMENT_SETTINGS = "tournament.settings"
    TOURNAMENT_DECIDE = "tournament.decide"
    TOURNAMENT_DRAW = "tournament.draw"
    TOURNAMENT_EXPIRE = "tournament.expire"
    TOURNAMENT_PRIZES = "tournament.prizes"
    TOURNAMENT_PRIZE_RECEIPT = "tournament.prize-receipt"
    HOTSEAT_PRIZE_RECEIPT = "hotseat.prize-receipt"
    TEAM_PRIZE_RECEIPT = "team.prize-receipt"
    PLAYER_READ = "player.read"
    PLAYER_ADD = "player.add"
    PLAYER_REINSTATE = "player.reinstate"
    PLAYER_DISQUALIFY = "player.disqualify"
    PLAYER_EXCLUSIONS = "player.import-exclusions"
    ENTRY_SELL = "entry.sell"
    ENTRY_REFUND = "entry.refund"
    HEAT_READ = "heat.read"
    HEAT_SCHEDULE = "heat.schedule"
    HEAT_REGISTER = "heat.register"
    HEAT_MANUAL_SCORE = "heat.manual-score"
    HEAT_DIRECT = "heat.direct"
    HEAT_ROLL_CALL = "heat.roll-call"
    HEAT_CONDUCT = "heat.conduct"
    BANK_READ = "bank.read"
    BANK_CLEAR_MARK = "bank.clear-mark"
    BANK_FLOOR = "bank.floor"
    SUPER9_READ = "super9.read"
    SUPER9_SESSIONS = "super9.sessions"
    SUPER9_SETTINGS = "super9.settings"
    SUPER9_SELL = "super9.sell"
    SUPER9_HAND_IN = "super9.hand-in"
    SUPER9_NUMBERS = "super9.change-numbers"
    SUPER9_DISQUALIFY = "super9.disqualify"
    SUPER9_SPIN = "super9.spin"
    SUPER9_MANUAL_SPIN = "super9.manual-spin"
    SUPER9_CLAIM = "super9.claim"
    SUPER9_PRIZE_RECEIPT = "super9.prize-receipt"
    AUDIT_READ = "audit.read"
    CASHUP_READ = "cashup.read"
    ACCOUNTS_MANAGE = "accounts.manage"


R = Role
_EVERYONE = frozenset(Role)
_DESKS = frozenset({R.DIRECTOR, R.SUPERVISOR, R.CASHIER, R.DESK})

PERMISSIONS: dict[Permission, frozenset[Role]] = {
    Permission.TOURNAMENT_READ: _EVERYONE,
    Permission.TOURNAMENT_CREATE: frozenset({R.DIRECTOR}),
    Permission.TOURNAMENT_SETTINGS: frozenset({R.DIRECTOR}),
    # The director's decisions (T23), card and seat draws (T19, T14, T21), expiring
    # unused entries (T5-T8) and the prize schedule and surplus (T15).
    Permission.TOURNAMENT_DECIDE: frozenset({R.DIRECTOR}),
    Permission.TOURNAMENT_DRAW: frozenset({R.DIRECTOR}),
    Permission.TOURNAMENT_EXPIRE: frozenset({R.DIRECTOR}),
    Permission.TOURNAMENT_PRIZES: frozenset({R.DIRECTOR}),
    # T15: the cash desk (or the director) pays a prize; a second account witnesses it.
    Permission.TOURNAMENT_PRIZE_RECEIPT: frozenset({R.CASHIER, R.DIRECTOR}),
    # HS7: a hot-seat prize is paid the same way, witnessed by a second account.
    Permission.HOTSEAT_PRIZE_RECEIPT: frozenset({R.CASHIER, R.DIRECTOR}),
    # H12: so is a team place, to the team's captain.
    Permission.TEAM_PRIZE_RECEIPT: frozenset({R.CASHIER, R.DIRECTOR}),
    Permission.PLAYER_READ: _DESKS | {R.AUDITOR},
    Permission.PLAYER_ADD: _DESKS,
    Permission.PLAYER_REINSTATE: frozenset({R.DIRECTOR}),
    # A disqualification is a director's decision (T23); an exclusion register (T2, T3)
    # is loaded by Guest Relations or whoever runs the floor.
    Permission.PLAYER_DISQUALIFY: frozenset({R.DIRECTOR}),
    Permission.PLAYER_EXCLUSIONS: frozenset({R.DESK, R.DIRECTOR, R.SUPERVISOR}),
    Permission.ENTRY_SELL: frozenset({R.CASHIER, R.SUPERVISOR}),
    Permission.ENTRY_REFUND: frozenset({R.CASHIER, R.SUPERVISOR}),
    Permission.HEAT_READ: _EVERYONE,
    Permission.HEAT_SCHEDULE: frozenset({R.DIRECTOR}),
    Permission.HEAT_REGISTER: _DESKS,
    Permission.HEAT_MANUAL_SCORE: frozenset({R.DIRECTOR, R.SUPERVISOR}),
    Permission.HEAT_DIRECT: frozenset({R.DIRECTOR, R.TECHNICIAN}),
    # T22: the floor's roll call before a heat; the director may take it too.
    Permission.HEAT_ROLL_CALL: frozenset({R.DIRECTOR, R.SUPERVISOR}),
    # What the director does around a heat (moving or cancelling it is heat.schedule,
    # T10): begin and finish it (T16, T22), its incidents (T20-T21: malfunction,
    # restart, postpone, the added heat's seat draw), proxy forms (T16) and
    # reinstating a forfeited seat (T23).
    Permission.HEAT_CONDUCT: frozenset({R.DIRECTOR}),
    Permission.BANK_READ: frozenset({R.TECHNICIAN, R.DIRECTOR, R.SUPERVISOR, R.AUDITOR}),
    # Whoever checked the machine clears its SNMP trap marks (``reelgate bank clear-mark``).
    Permission.BANK_CLEAR_MARK: frozenset({R.TECHNICIAN}),
    # The floor's rows: adding a machine to a bank, moving it or changing its endpoint.
    Permission.BANK_FLOOR: frozenset({R.TECHNICIAN}),
    Permission.SUPER9_READ: frozenset(
        {R.PROMOTION_DIRECTOR, R.DEALER, R.SUPERVISOR, R.AUDITOR, R.CASHIER, R.DESK}
    ),
    # Super 9 (rule numbers of the Super 9 sheet): the cash desk sells (5), Guest
    # Relations takes hand-ins (6, 10), the Promotion Director keeps the top copies (11)
    # and signs off number changes (23), the dealer and supervisor run the table (18).
    Permission.SUPER9_SESSIONS: frozenset({R.PROMOTION_DIRECTOR, R.SUPERVISOR}),
    Permission.SUPER9_SETTINGS: frozenset({R.PROMOTION_DIRECTOR}),
    Permission.SUPER9_SELL: frozenset({R.CASHIER}),
    Permission.SUPER9_HAND_IN: frozenset({R.DESK, R.PROMOTION_DIRECTOR}),
    Permission.SUPER9_NUMBERS: frozenset({R.DESK, R.PROMOTION_DIRECTOR}),
    Permission.SUPER9_DISQUALIFY: frozenset({R.PROMOTION_DIRECTOR, R.SUPERVISOR}),
    Permission.SUPER9_SPIN: frozenset({R.DEALER, R.SUPERVISOR}),
    Permission.SUPER9_MANUAL_SPIN: frozenset({R.DEALER, R.SUPERVISOR}),
    Permission.SUPER9_CLAIM: frozenset({R.DEALER, R.SUPERVISOR, R.PROMOTION_DIRECTOR}),
    Permission.SUPER9_PRIZE_RECEIPT: frozenset({R.CASHIER, R.PROMOTION_DIRECTOR}),
    Permission.AUDIT_READ: frozenset({R.AUDITOR, R.DIRECTOR, R.PROMOTION_DIRECTOR, R.SUPERVISOR}),
    # The day's cash-up: a cashier sees their own figures only (gateway/web/api/routes/cashup).
    Permission.CASHUP_READ: frozenset({R.AUDITOR, R.CASHIER, R.DIRECTOR}),
    Permission.ACCOUNTS_MANAGE: frozenset({R.ADMIN}),
}


def parse_role(text: str) -> Role:
    try:
        return Role(text.strip().lower())
    except ValueError:
        known = ", ".join(r.value for r in Role)
        raise ValueError(f"role: {text!r} is not a role (use one of {known})") from None


def allowed(role: Role | str, permission: Permission) -> bool:
    return Role(role) in PERMISSIONS[permission]


def role_table() -> list[tuple[str, list[str]]]:
    """(permission, roles) rows in table order, for docs/roles.md and ``users roles``."""
    return [(p.value, sorted(r.value for r in PERMISSIONS[p])) for p in Permission]
