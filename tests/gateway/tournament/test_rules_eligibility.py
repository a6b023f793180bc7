"""T1–T4: age and exclusion registers (pure).

Clauses: docs/rules.md#t1 to #t4.
"""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from gateway.tournament.rules.eligibility import (
    ExclusionRecord,
    Person,
    age_on,
    check_age,
    check_eligible,
)
from gateway.tournament.rules.enums import ExclusionKind
from gateway.tournament.rules.exclusion_csv import ExclusionCsvError, parse_exclusion_csv
from gateway.tournament.rules.violations import RuleViolation

SAST = ZoneInfo("Africa/Johannesburg")


def test_rule_1_eighteenth_birthday_is_the_first_day() -> None:
    dob = date(2008, 11, 29)
    with pytest.raises(RuleViolation, match=r"^rule 1: participant is 17"):
        check_age(dob, date(2026, 11, 28))
    check_age(dob, date(2026, 11, 29))


def test_rule_1_leap_day_birthday_counts_from_1_march_in_common_years() -> None:
    dob = date(2008, 2, 29)
    assert age_on(dob, date(2026, 2, 28)) == 17
    assert age_on(dob, date(2026, 3, 1)) == 18
    assert age_on(dob, date(2028, 2, 29)) == 20  # a leap year: the day itself
    with pytest.raises(RuleViolation, match=r"rule 1"):
        check_age(dob, date(2026, 2, 28))


def test_rule_1_birth_after_the_date_is_refused() -> None:
    with pytest.raises(RuleViolation, match=r"rule 1"):
        age_on(date(2030, 1, 1), date(2026, 1, 1))


def _record(kind: ExclusionKind, until: datetime | None = None) -> ExclusionRecord:
    return ExclusionRecord(
        kind, "8001015009087", "A Person", datetime(2026, 1, 1, tzinfo=SAST), until
    )


@pytest.mark.parametrize(
    ("kind", "rule"),
    [
        (ExclusionKind.SELF_EXCLUSION, 2),
        (ExclusionKind.REFUSAL_OF_ENTRY, 2),
        (ExclusionKind.EXCLUDED_CATEGORY, 2),
        (ExclusionKind.STAFF, 3),
        (ExclusionKind.CONNECTED_PERSON, 3),
    ],
)
def test_rules_2_and_3_registers_bar_by_id_number(kind: ExclusionKind, rule: int) -> None:
    person = Person("800101 5009 087", "A Person", date(1980, 1, 1))  # spaces normalised
    when = datetime(2026, 6, 1, 12, tzinfo=SAST)
    with pytest.raises(RuleViolation, match=rf"^rule {rule}: "):
        check_eligible(person, [_record(kind)], when, when.date())


def test_rule_2_exclusion_ends_and_rule_4_nothing_else_is_asked() -> None:
    person = Person("8001015009087", "A Person", date(1980, 1, 1))
    ended = _record(ExclusionKind.SELF_EXCLUSION, until=datetime(2026, 3, 1, tzinfo=SAST))
    when = datetime(2026, 6, 1, tzinfo=SAST)
    check_eligible(person, [ended], when, when.date())  # no membership, no card: T4
    other = Person("9001015009088", "A Person", date(1980, 1, 1))  # same name, other id
    check_eligible(other, [_record(ExclusionKind.STAFF)], when, when.date())


def test_rule_2_csv_import_reads_every_kind_and_date_forms() -> None:
    text = (
        "kind,id_number,name,valid_from,valid_until,note\n"
        "self-exclusion,8001015009087,Ann,2026-01-01,,NRGP 1\n"
        "staff,7002025009081,Ben,2026-01-01,2026-12-31,HR\n"
        "\n"
        "refusal-of-entry,6003035009085,Cat,2026-05-01T10:00:00+02:00,,order 7\n"
    )
    records = parse_exclusion_csv(text, SAST)
    assert [r.kind for r in records] == [
        ExclusionKind.SELF_EXCLUSION,
        ExclusionKind.STAFF,
        ExclusionKind.REFUSAL_OF_ENTRY,
    ]
    staff = records[1]
    # the valid_until date is the last excluded day
    assert staff.active_at(datetime(2026, 12, 31, 23, 59, tzinfo=SAST))
    assert not staff.active_at(datetime(2027, 1, 1, 0, 0, tzinfo=SAST))
    assert records[2].valid_from == datetime(2026, 5, 1, 8, 0, tzinfo=ZoneInfo("UTC"))


def test_rule_2_csv_errors_name_every_bad_line() -> None:
    text = (
        "kind,id_number,name,valid_from,valid_until,note\n"
        "self-exclusion,8001015009087,Ann,2026-01-01,,\n"
        "banned,8001015009088,Bob,2026-01-01,,\n"
        "staff,,Cy,2026-01-01,,\n"
        "staff,8001015009089,Di,2026-13-01,,\n"
        "staff,8001015009090,Ed,2026-02-01,2026-01-01,\n"
        "self-exclusion,8001015009087,Ann,2026-01-01,,\n"
        "staff,8001015009091,Fi\n"
    )
    with pytest.raises(ExclusionCsvError) as caught:
        parse_exclusion_csv(text, SAST)
    lines = [line for line, _ in caught.value.problems]
    assert lines == [3, 4, 5, 6, 7, 8]
    # Every bad line is named in the one refusal (it said "and 5 more problems").
    said = str(caught.value)
    assert said.startswith("rule 2: exclusion CSV: 6 problems, nothing imported: line 3: kind")
    for line in lines:
        assert f"line {line}: " in said
    assert "\n" not in said
    messages = dict(caught.value.problems)
    assert "id_number is empty" in messages[4]
    assert "valid_from '2026-13-01'" in messages[5]
    assert "not after valid_from" in messages[6]
    assert "duplicate of line 2" in messages[7]
    assert "3 fields" in messages[8]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty file"),
        ("kind,name,valid_from\n", "missing column 'id_number'"),
        ("kind,id_number,valid_from,colour\n", "unknown column 'colour'"),
        ("kind,id_number,valid_from\nstaff,1,2026-01-01T00:00:00\n", "needs a UTC offset"),
    ],
)
def test_rule_2_csv_header_and_offset_errors(text: str, message: str) -> None:
    with pytest.raises(ExclusionCsvError, match=message):
        parse_exclusion_csv(text, SAST)
