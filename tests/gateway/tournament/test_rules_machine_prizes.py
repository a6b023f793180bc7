"""Prizes to the machine, the pure parts (house clauses P1, P3, P5, docs/rules.md#p1):
the venue's setting, the one-line refusals in their order, what a machine's reading of a
transfer means for the journal, and what an LP 72 reply says of a prize transfer."""

from __future__ import annotations

import pytest

from gateway.machines.sas_aft import prize_reading
from gateway.tournament.rules.machine_prizes import (
    MachineFacts,
    Reading,
    Verdict,
    check_allowed,
    check_setting,
    refusal,
    verdict,
)
from gateway.tournament.rules.violations import RuleViolation
from protocols.sas import AftTransferReply, AftTransferStatus

IDLE = MachineFacts("A-01", aft=True, in_tournament=False, locked=False, busy=False)


def test_p1_off_by_default_and_the_setting_needs_a_reason_and_a_life_in_days() -> None:
    with pytest.raises(RuleViolation, match=r"^rule P1: prizes to the machine are not allowed"):
        check_allowed(None)  # no decision yet: off
    with pytest.raises(RuleViolation, match=r"^rule P1: prizes to the machine are not allowed"):
        check_allowed(False)
    check_allowed(True)
    check_setting(True, 30, "Gauteng Gambling Board approval 2026/114")
    with pytest.raises(RuleViolation, match=r"^rule P1: a reason is required"):
        check_setting(True, 30, "  ")
    for bad in (0, 10000):
        with pytest.raises(RuleViolation, match=r"^rule P1: expiration_days must be 1 to 9999"):
            check_setting(True, bad, "terms")
    with pytest.raises(RuleViolation, match=r"^rule P1: expiration_days must be a whole number"):
        check_setting(True, True, "terms")


def test_p3_an_idle_aft_machine_within_its_limit_may_be_paid() -> None:
    assert refusal(IDLE, 10_000) is None
    at_limit = MachineFacts("A-01", True, False, False, False, limit_cents=10_000)
    assert refusal(at_limit, 10_000) is None


@pytest.mark.parametrize(
    ("facts", "line"),
    [
        (
            MachineFacts("A-01", False, True, True, True, why_not_aft="no AFT (LP A0)"),
            "rule P3: machine A-01 cannot take AFT credits (no AFT (LP A0))",
        ),
        (
            MachineFacts("A-01", True, True, True, True),
            "rule P3: machine A-01 is in tournament mode or seated in a heat",
        ),
        (
            MachineFacts("A-01", True, False, True, True),
            "rule P3: machine A-01 is locked (transfers to it are not possible now)",
        ),
        (
            MachineFacts("A-01", True, False, False, True),
            "rule P3: machine A-01 is not idle (a game or a transfer is under way)",
        ),
        (
            MachineFacts("A-01", True, False, False, False, limit_cents=9_999),
            "rule P3: 10000 cents is over machine A-01's transfer limit of 9999 cents",
        ),
    ],
)
def test_p3_refusals_are_one_line_first_cause_first(facts: MachineFacts, line: str) -> None:
    assert refusal(facts, 10_000) == line


def test_p5_what_a_reading_means_for_the_journal() -> None:
    assert verdict(Reading.DONE, sends=1) is Verdict.PAID
    assert verdict(Reading.REFUSED, sends=1) is Verdict.REFUSED
    assert verdict(Reading.PENDING, sends=1) is Verdict.WAIT
    # not seen: sent again with the same transaction ID while tries are left, then a person
    assert verdict(Reading.NOT_SEEN, sends=0) is Verdict.SEND
    assert verdict(Reading.NOT_SEEN, sends=2) is Verdict.SEND
    assert verdict(Reading.NOT_SEEN, sends=3) is Verdict.UNKNOWN
    # the money may have moved: never paid twice, never called refused
    assert verdict(Reading.DUPLICATE, sends=1) is Verdict.UNKNOWN
    assert verdict(Reading.ODD, sends=1) is Verdict.UNKNOWN


def _reply(status: int, tid: str, restricted: int = 0) -> AftTransferReply:
    return AftTransferReply(
        1,
        buffer_position=0,
        transfer_status=status,
        receipt_status=0xFF,
        transfer_type=0,
        cashable_cents=0,
        restricted_cents=restricted,
        nonrestricted_cents=0,
        transfer_flags=0,
        asset_number=1001,
        transaction_id=tid,
    )


def test_p5_an_lp72_reply_read_for_the_journaled_transaction_id() -> None:
    ok = AftTransferStatus.FULL_TRANSFER_OK
    assert prize_reading(_reply(ok, "RP1", 5000), "RP1", 5000).reading == "done"
    assert prize_reading(_reply(ok, "RP1", 2500), "RP1", 5000).reading == "odd"
    assert prize_reading(_reply(ok, "HEAT7", 5000), "RP1", 5000).reading == "not seen"
    none = AftTransferReply.no_information(1)
    assert prize_reading(none, "RP1", 5000).reading == "not seen"
    pending = prize_reading(_reply(AftTransferStatus.PENDING, "RP1"), "RP1", 5000)
    assert pending.reading == "pending"
    refused = prize_reading(_reply(AftTransferStatus.UNABLE_TO_TRANSFER_NOW, "RP1"), "RP1", 5000)
    assert (refused.reading, refused.egm_status) == ("refused", 0x87)
    assert refused.detail == "AFT transfer RP1 refused (87 unable to transfer now)"
    dup = prize_reading(_reply(AftTransferStatus.DUPLICATE_TRANSACTION_ID, "RP1"), "RP1", 5000)
    assert dup.reading == "duplicate"
