"""SNMP security settings shared by the emulated agent, the health poller and the trap
receiver.  SNMPv3 with authentication *and* privacy (authPriv) is the default; SNMPv2c
(a community string, sent in clear) is only used when a site configures it.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass
from typing import Any

from pysnmp.entity import config
from pysnmp.hlapi.v3arch.asyncio import CommunityData, UsmUserData


class AuthProtocol(enum.Enum):
    SHA1 = "sha"
    SHA224 = "sha224"
    SHA256 = "sha256"
    SHA384 = "sha384"
    SHA512 = "sha512"


class PrivProtocol(enum.Enum):
    AES128 = "aes"
    AES192 = "aes192"
    AES256 = "aes256"


_AUTH = {
    AuthProtocol.SHA1: config.USM_AUTH_HMAC96_SHA,
    AuthProtocol.SHA224: config.USM_AUTH_HMAC128_SHA224,
    AuthProtocol.SHA256: config.USM_AUTH_HMAC192_SHA256,
    AuthProtocol.SHA384: config.USM_AUTH_HMAC256_SHA384,
    AuthProtocol.SHA512: config.USM_AUTH_HMAC384_SHA512,
}
_PRIV = {
    PrivProtocol.AES128: config.USM_PRIV_CFB128_AES,
    PrivProtocol.AES192: config.USM_PRIV_CFB192_AES_BLUMENTHAL,
    PrivProtocol.AES256: config.USM_PRIV_CFB256_AES_BLUMENTHAL,
}


@dataclass(frozen=True, slots=True)
class V3User:
    """An SNMPv3 USM user at authPriv (the only v3 level Reelgate accepts)."""

    user: str
    auth_key: str
    priv_key: str
    auth: AuthProtocol = AuthProtocol.SHA256
    priv: PrivProtocol = PrivProtocol.AES128

    def __post_init__(self) -> None:
        if not self.user:
            raise ValueError("SNMPv3 user name is empty")
        if len(self.auth_key) < 8 or len(self.priv_key) < 8:
            raise ValueError("SNMPv3 auth and priv pass phrases need at least 8 characters")

    def __repr__(self) -> str:  # never print keys into logs
        return f"V3User({self.user!r}, auth={self.auth.value}, priv={self.priv.value})"


@dataclass(frozen=True, slots=True)
class V2cCommunity:
    community: str

    def __post_init__(self) -> None:
        if not self.community:
            raise ValueError("SNMPv2c community is empty")

    def __repr__(self) -> str:
        return "V2cCommunity(***)"


Security = V3User | V2cCommunity


def auth_data(security: Security) -> Any:
    """hlapi credentials for a request or a notification."""
    if isinstance(security, V2cCommunity):
        return CommunityData(security.community, mpModel=1)
    return UsmUserData(
        security.user,
        security.auth_key,
        security.priv_key,
        authProtocol=_AUTH[security.auth],
        privProtocol=_PRIV[security.priv],
    )


def add_user(
    engine: Any,
    security: Security,
    *,
    read_view: tuple[int, ...] | None = None,
    engine_id: bytes | None = None,
) -> None:
    """Teach a pysnmp engine a user (agent side: with read access to ``read_view``;
    trap-receiver side: ``engine_id`` of the sender whose traps we accept)."""
    if isinstance(security, V2cCommunity):
        area = "c-" + hashlib.sha256(security.community.encode()).hexdigest()[:12]
        config.add_v1_system(engine, area, security.community)
        if read_view is not None:
            config.add_vacm_user(engine, 2, area, "noAuthNoPriv", read_view)
        return
    extra: dict[str, Any] = {}
    if engine_id is not None:
        from pysnmp.proto import rfc1902

        extra["securityEngineId"] = rfc1902.OctetString(engine_id)
    config.add_v3_user(
        engine,
        security.user,
        _AUTH[security.auth],
        security.auth_key,
        _PRIV[security.priv],
        security.priv_key,
        **extra,
    )
    if read_view is not None:
        config.add_vacm_user(engine, 3, security.user, "authPriv", read_view)
