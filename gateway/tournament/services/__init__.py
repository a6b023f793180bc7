"""Async services over storage: validate with :mod:`gateway.tournament.rules` first, then
write, and audit every change a person makes.  Each takes an ``AsyncSession`` and works
inside the caller's transaction (see :func:`common.unit_of_work`), so a refused action
rolls back whole."""

from gateway.tournament.services.attendance import RollCall, mark_attendance, roll_call
from gateway.tournament.services.cashdesk import expire_entries, refund_entry, sell_entries
from gateway.tournament.services.common import unit_of_work
from gateway.tournament.services.draws import (
    DrawnCard,
    digital_draw,
    record_physical_draw,
    verify_digital_draws,
)
from gateway.tournament.services.finals import (
    add_proxy,
    seat_stage,
    seat_waiting_in_added_heat,
    seats_waiting,
)
from gateway.tournament.services.incidents import (
    handle_system_failure,
    mark_seat_malfunctioned,
    postpone_heat,
    restart_heat,
)
from gateway.tournament.services.people import (
    add_player,
    disqualify,
    find_player,
    import_exclusions,
    reinstate,
)
from gateway.tournament.services.scoring import (
    enter_manual_score,
    record_machine_score,
    record_machine_scores,
)
from gateway.tournament.services.seating import (
    begin_heat,
    finish_heat,
    heat_seats,
    playing_at_start,
    register_for_heat,
    reinstate_seat,
)
from gateway.tournament.services.setup import (
    cancel_heat,
    change_settings,
    create_tournament,
    list_heats,
    record_decision,
    reschedule_heat,
    schedule_heat,
)
from gateway.tournament.services.standings import qualifiers, stage_standings, top_standings

__all__ = [
    "DrawnCard",
    "RollCall",
    "add_player",
    "add_proxy",
    "begin_heat",
    "cancel_heat",
    "change_settings",
    "create_tournament",
    "digital_draw",
    "disqualify",
    "enter_manual_score",
    "expire_entries",
    "find_player",
    "finish_heat",
    "handle_system_failure",
    "heat_seats",
    "import_exclusions",
    "list_heats",
    "mark_attendance",
    "mark_seat_malfunctioned",
    "playing_at_start",
    "postpone_heat",
    "qualifiers",
    "record_decision",
    "record_machine_score",
    "record_machine_scores",
    "record_physical_draw",
    "refund_entry",
    "register_for_heat",
    "reinstate",
    "reinstate_seat",
    "reschedule_heat",
    "restart_heat",
    "roll_call",
    "schedule_heat",
    "seat_stage",
    "seat_waiting_in_added_heat",
    "seats_waiting",
    "sell_entries",
    "stage_standings",
    "top_standings",
    "unit_of_work",
    "verify_digital_draws",
]
