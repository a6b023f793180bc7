"""Super 9 clauses as the sheet writes them, through the desk: the day's disqualification
(S9-9), the person's disqualification (S9-24, S9-28), the verification section (S9-7),
late tickets (S9-6), the registers after the sale (S9-2, S9-3) and the prize receipt
(S9-26).

Clauses: docs/rules.md#s9-9, #s9-24, #s9-28, #s9-7, #s9-6, #s9-2, #s9-3, #s9-26.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.errors import OperatorError
from gateway.super9.desk import Super9Desk
from gateway.super9.desk.core import Disqualified
from gateway.super9.rules.verification import Verification
from storage.db import make_sessionmaker
from storage.enums import ExclusionKind
from storage.super9 import Super9Ticket, TicketStatus
from storage.tournament import Exclusion

from .conftest import WED, at, key_in

P1, P2 = "C1", "C2"
P1_ID = "8001015009087"
NINE = "1 2 3 4 5 6 7 8 9"


async def _status(engine: AsyncEngine, serial: str) -> tuple[TicketStatus, str | None]:
    async with make_sessionmaker(engine)() as db:
        row = (
            await db.execute(select(Super9Ticket).where(Super9Ticket.serial == serial))
        ).scalar_one()
        return row.status, row.disqualified_reason


async def _bar(engine: AsyncEngine, id_number: str, kind: ExclusionKind, start: datetime) -> None:
    async with make_sessionmaker(engine).begin() as db:
        db.add(
            Exclusion(
                kind=kind,
                id_number=id_number,
                valid_from=start,
                source="test register",
                created_by="compliance",
            )
        )


async def test_s9_9_invalid_claim_bars_later_sales_and_hand_ins_that_day(
    desk: Super9Desk, engine: AsyncEngine
) -> None:
    """S9-9: an invalid claim disqualifies the participant "from that day's promotion":
    later sales and hand-ins to them that day are refused, not only tickets held.
    The next draw day they may play again."""
    await desk.sell("A", P1, actor="cashier", now=at(WED, 10))
    await desk.sell("H", P1, actor="cashier", now=at(WED, 10))  # held, not handed in
    sid = await key_in(desk, "A", NINE, actor="grd", now=at(WED, 18))
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    claim = await desk.claim(sid, "A", "1 2 3 4 5 6 7 8 10", actor="grd", now=at(WED, 19, 5))
    assert not claim.valid
    assert (await _status(engine, "H"))[0] is TicketStatus.DISQUALIFIED
    with pytest.raises(OperatorError, match="rule 9: the player is disqualified"):
        await desk.sell("A3", P1, actor="cashier", now=at(WED, 19, 10))  # for 21:00
    assert await desk.sell("B", P2, actor="cashier", now=at(WED, 19, 10)) > 0  # others may
    sunday = WED + timedelta(days=4)
    assert await desk.sell("A4", P1, actor="cashier", now=at(sunday, 10)) > 0


async def test_s9_9_disqualify_rule_9_covers_the_day(desk: Super9Desk, engine: AsyncEngine) -> None:
    """S9-9: staff's ``disqualify --rule 9`` puts the player out for the whole day, as an
    invalid claim does: their other tickets, and later sales and hand-ins."""
    await desk.sell("A", P1, actor="cashier", now=at(WED, 10))
    await desk.sell("A2", P1, actor="cashier", now=at(WED, 11))
    await desk.disqualify("A", actor="grd", reason="repeat on top copy", rule=9, now=at(WED, 12))
    assert (await _status(engine, "A2"))[0] is TicketStatus.DISQUALIFIED
    with pytest.raises(OperatorError, match="rule 9"):
        await desk.sell("A3", P1, actor="cashier", now=at(WED, 13))


@pytest.mark.parametrize("rule", [24, 28])
async def test_s9_24_s9_28_disqualify_the_person(
    desk: Super9Desk, engine: AsyncEngine, rule: int
) -> None:
    """S9-24 / S9-28: "any person ... will be disqualified": the person, not one ticket.
    Before, only the ticket named was taken out and the player went on playing their
    other tickets and buying new ones.  Now every open ticket of theirs, on any day, is
    out, and later sales are refused on later days too; other players are untouched."""
    sunday = WED + timedelta(days=4)
    await desk.sell("A", P1, actor="cashier", now=at(WED, 10))
    await desk.sell("A2", P1, actor="cashier", now=at(WED, 10))  # for 19:00, too
    await desk.sell("A3", P1, actor="cashier", now=at(WED, 19, 30))  # for 21:00
    await desk.sell("B", P2, actor="cashier", now=at(WED, 10))
    out = await desk.disqualify(
        "A", actor="grd", reason="tried to change numbers after the draw began", rule=rule,
        now=at(WED, 19, 40),
    )  # fmt: skip
    assert out == ["A", "A2", "A3"]
    for serial in ("A2", "A3"):
        status, reason = await _status(engine, serial)
        assert status is TicketStatus.DISQUALIFIED
        assert reason == f"rule {rule}: person disqualified (ticket A)"
    assert (await _status(engine, "B"))[0] is TicketStatus.SOLD
    with pytest.raises(OperatorError, match=f"rule {rule}: the player is disqualified from the"):
        await desk.sell("A4", P1, actor="cashier", now=at(sunday, 10))  # a later day too
    assert await desk.sell("B2", P2, actor="cashier", now=at(sunday, 10)) > 0


async def test_s9_21_still_takes_out_one_ticket(desk: Super9Desk, engine: AsyncEngine) -> None:
    """S9-21 (a marked or scratched ticket) is about the ticket: the player's others stay."""
    await desk.sell("A", P1, actor="cashier", now=at(WED, 10))
    await desk.sell("A2", P1, actor="cashier", now=at(WED, 10))
    assert await desk.disqualify("A", actor="grd", reason="scratched", rule=21,
                                 now=at(WED, 12)) == ["A"]  # fmt: skip
    assert (await _status(engine, "A2"))[0] is TicketStatus.SOLD
    assert await desk.sell("A3", P1, actor="cashier", now=at(WED, 13)) > 0


async def test_s9_9_top_copy_with_a_repeat_disqualifies_for_the_day(
    desk: Super9Desk, engine: AsyncEngine
) -> None:
    """S9-9: a top copy keyed with a number twice or more than nine numbers is not a
    keying error: the ticket is disqualified (it cannot be keyed again) and the player is
    out of that day's promotion.  An S9-8 keying error can be keyed again (S9-8)."""
    for serial in ("R", "R2", "N"):
        await desk.sell(serial, P1, actor="cashier", now=at(WED, 10))
    with pytest.raises(OperatorError, match="rule 8"):
        await key_in(desk, "R", "1 2 3 4 5 6 7 8 37", actor="grd", now=at(WED, 17))
    with pytest.raises(Disqualified, match=r"rule 9.*disqualified"):
        await key_in(desk, "R", "1 2 3 4 5 6 7 8 8", actor="grd", now=at(WED, 17))
    status, reason = await _status(engine, "R")
    assert status is TicketStatus.DISQUALIFIED
    assert reason is not None
    assert "rule 9" in reason
    assert (await _status(engine, "R2"))[0] is TicketStatus.DISQUALIFIED
    with pytest.raises(OperatorError, match="disqualified, not awaiting hand-in"):
        await key_in(desk, "R", NINE, actor="grd", now=at(WED, 17, 5))
    with pytest.raises(OperatorError, match="rule 9"):
        await desk.sell("R3", P1, actor="cashier", now=at(WED, 17, 10))


async def test_s9_9_more_than_nine_on_the_top_copy_disqualifies(
    desk: Super9Desk, engine: AsyncEngine
) -> None:
    """S9-9: more than nine numbers selected on the top copy disqualifies as a repeat does."""
    await desk.sell("T", P2, actor="cashier", now=at(WED, 10))
    with pytest.raises(Disqualified, match="more than nine"):
        await key_in(desk, "T", "1 2 3 4 5 6 7 8 9 10", actor="grd", now=at(WED, 17))
    assert (await _status(engine, "T"))[0] is TicketStatus.DISQUALIFIED


async def test_s9_6_late_ticket_is_valid_for_the_next_session_only(desk: Super9Desk) -> None:
    """S9-6: after the cut-off a ticket is valid for the next session only — even when
    that session has not been closed, a hand-in after its cut-off is refused rather than
    landing several sessions later.  At the cut-off instant itself it is on time."""
    await desk.sell("E", P1, actor="cashier", now=at(WED, 10))
    assert await key_in(desk, "E", NINE, actor="grd", now=at(WED, 18, 45)) == (
        await desk.session_for(at(WED, 19))
    )
    await desk.sell("L", P2, actor="cashier", now=at(WED, 10))  # for 19:00; never closed
    with pytest.raises(OperatorError, match="rule 6: ticket L was valid for the next"):
        await key_in(desk, "L", NINE, actor="grd", now=at(WED, 20, 50))
    with pytest.raises(OperatorError, match="rule 6"):
        await desk.open_session(at(WED, 19), actor="director", now=at(WED, 18, 45))


async def test_s9_2_register_line_after_the_sale_bars_hand_in_claim_and_payout(
    desk: Super9Desk, engine: AsyncEngine
) -> None:
    """S9-2/S9-3: the registers are checked again at hand-in, at the claim and at the
    payout; a line that takes effect after the sale refuses each, naming the rule."""
    await desk.sell("A", P1, actor="cashier", now=at(WED, 10))
    await desk.sell("B", P2, actor="cashier", now=at(WED, 10))
    await _bar(engine, "9002026009088", ExclusionKind.STAFF, at(WED, 12))
    with pytest.raises(OperatorError, match="rule 3: player 9002026009088 is on the staff"):
        await key_in(desk, "B", NINE, actor="grd", now=at(WED, 18))
    sid = await key_in(desk, "A", NINE, actor="grd", now=at(WED, 18))
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    for n, game in zip(range(1, 10), range(100, 109), strict=True):
        await desk.record_result(sid, game, n, now=at(WED, 19, 5))
    await _bar(engine, P1_ID, ExclusionKind.SELF_EXCLUSION, at(WED, 19, 6))
    with pytest.raises(OperatorError, match="rule 2: player 8001015009087"):
        await desk.claim(sid, "A", NINE, actor="grd", now=at(WED, 19, 7))


async def test_s9_2_register_line_before_the_payout_refuses_it(
    desk: Super9Desk, engine: AsyncEngine
) -> None:
    """S9-2: a self-exclusion that starts after the win refuses the payout (receipt)."""
    sid = await _won(desk, "A", P1)
    await _bar(engine, P1_ID, ExclusionKind.SELF_EXCLUSION, at(WED, 19, 40))
    with pytest.raises(OperatorError, match="rule 2"):
        await _sign(desk, sid, "A", signer=P1)


async def _won(desk: Super9Desk, serial: str, player: str) -> int:
    await desk.sell(serial, player, actor="cashier", now=at(WED, 10))
    sid = await key_in(desk, serial, NINE, actor="grd", now=at(WED, 18))
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    for n, game in zip(range(1, 10), range(100, 109), strict=True):
        await desk.record_result(sid, game, n, now=at(WED, 19, 5))
    await desk.claim(sid, serial, NINE, actor="grd", now=at(WED, 19, 6))
    await desk.close_session(sid, actor="director", now=at(WED, 19, 30))
    return sid


async def _sign(
    desk: Super9Desk, sid: int, serial: str, *, signer: str, witness: str = "grd"
) -> None:
    await desk.sign_prize(
        sid,
        serial,
        "jackpot",
        signature="slip 9",
        witness=witness,
        signer=signer,
        actor="cashier",
        now=at(WED, 19, 50),
    )


async def test_s9_26_receipt_is_signed_by_the_ticket_s_player_with_a_witness(
    desk: Super9Desk, engine: AsyncEngine
) -> None:
    """S9-26: prizes are not transferable — the receipt's signer must be the ticket's
    player; the witness is named, and is not the winner."""
    sid = await _won(desk, "A", P1)
    with pytest.raises(OperatorError, match="rule 26: prizes are not transferable"):
        await _sign(desk, sid, "A", signer=P2)
    with pytest.raises(OperatorError, match="rule 26: name the staff member"):
        await _sign(desk, sid, "A", signer=P1, witness=" ")
    with pytest.raises(OperatorError, match="rule 26: the witness"):
        await _sign(desk, sid, "A", signer=P1, witness=P1)
    await _sign(desk, sid, "A", signer=P1_ID)  # by ID number as well as card
    report = await desk.report(sid)
    jackpot = next(p for p in report["prizes"] if p["kind"] == "jackpot")
    assert jackpot["witnessed_by"] == "grd"
    assert jackpot["signed_by"] == "slip 9"


async def test_s9_7_verification_section_must_be_complete_and_the_buyer_s(
    desk: Super9Desk, engine: AsyncEngine
) -> None:
    """S9-7: the verification section must be completed "accurately and in full": every
    field the ``verification_fields`` setting requires (default all four), and the ID or
    card number must be the buyer's.  Refused with S9-7; it can then be keyed again."""
    await desk.sell("V", P1, actor="cashier", now=at(WED, 10))
    full = Verification("Player 1", P1, "082 555 0100", True)
    unsigned = Verification("Player 1", P1, "082 555 0100", False)
    with pytest.raises(OperatorError, match=r"rule 7: .*signature missing"):
        await desk.hand_in("V", NINE, actor="grd", now=at(WED, 17), verification=unsigned)
    with pytest.raises(OperatorError, match=r"rule 7: .*name, id, contact, signature"):
        await desk.hand_in("V", NINE, actor="grd", now=at(WED, 17))
    wrong = Verification("Player 1", P2, "082 555 0100", True)
    with pytest.raises(OperatorError, match="rule 7: the ID or card number"):
        await desk.hand_in("V", NINE, actor="grd", now=at(WED, 17), verification=wrong)
    await desk.hand_in("V", NINE, actor="grd", now=at(WED, 17), verification=full)
    async with make_sessionmaker(engine)() as db:
        row = (
            await db.execute(select(Super9Ticket).where(Super9Ticket.serial == "V"))
        ).scalar_one()
        assert row.verification == full.to_json()
    # The setting: a venue that asks only for the name and a signature.
    await desk.change_settings(
        {"verification_fields": "name,signature"},
        actor="director",
        reason="short form tickets",
        now=at(WED, 17, 10),
    )
    assert (await desk.settings()).verification_fields == ("name", "signature")
    await desk.sell("W", P2, actor="cashier", now=at(WED, 17, 15))
    short = Verification(name="Player 2", signature=True)
    assert await desk.hand_in("W", NINE, actor="grd", now=at(WED, 18), verification=short) > 0
    with pytest.raises(OperatorError, match="verification_fields"):
        await desk.change_settings(
            {"verification_fields": "name,shoe size"},
            actor="director",
            reason="typo",
            now=at(WED, 18),
        )
