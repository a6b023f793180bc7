"""pysnmp's error indications and statuses become typed, retry-classified exceptions."""

from __future__ import annotations

import pytest
from pysnmp.proto import errind
from pysnmp.proto.api import v2c

from protocols.snmp.errors import (
    RETRYABLE,
    SnmpAgentError,
    SnmpAuthError,
    SnmpError,
    SnmpNoSuchObject,
    SnmpProtocolError,
    SnmpTimeout,
    raise_for,
)


@pytest.mark.parametrize(
    ("indication", "expected", "retryable"),
    [
        (errind.RequestTimedOut(), SnmpTimeout, True),
        (errind.UnknownUserName(), SnmpAuthError, False),
        (errind.WrongDigest(), SnmpAuthError, False),
        (errind.DecryptionError(), SnmpAuthError, False),
        (errind.UnsupportedSecurityLevel(), SnmpAuthError, False),
        (errind.UnknownCommunityName(), SnmpAuthError, False),
        (errind.NotInTimeWindow(), SnmpProtocolError, True),
        (errind.ParseError(), SnmpProtocolError, True),
        (errind.OtherError(), SnmpError, False),
    ],
)
def test_error_indications(indication: object, expected: type[SnmpError], retryable: bool) -> None:
    with pytest.raises(expected) as caught:
        raise_for(indication, 0, 0, "A01 GET")
    assert type(caught.value) is expected
    assert isinstance(caught.value, RETRYABLE) is retryable
    assert str(caught.value).startswith("A01 GET: ")


def test_error_status() -> None:
    status = v2c.apiPDU.get_error_status(v2c.GetResponsePDU())
    raise_for(None, status.clone(0), 0, "ok")  # noError: nothing raised
    with pytest.raises(SnmpNoSuchObject, match="noSuchName at var-bind 2"):
        raise_for(None, status.clone("noSuchName"), 2, "A01 GET")
    with pytest.raises(SnmpAgentError, match="genErr") as caught:
        raise_for(None, status.clone("genErr"), 1, "A01 GET")
    assert caught.value.status == "genErr"
    assert not isinstance(caught.value, RETRYABLE)
