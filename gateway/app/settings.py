"""The installation's settings: one TOML file, the environment over it, flags over both.

Theory of operation
-------------------
:func:`load_settings` reads the file (``--config FILE``, else ``$REELGATE_CONFIG``, else
``/etc/reelgate/reelgate.toml`` when it exists; see :mod:`gateway.app.configfile`) with
:mod:`tomllib` and hands its tables to :class:`Settings`, a pydantic-settings model whose
sources are ordered so that the environment wins over the file: ``REELGATE_<SECTION>_<KEY>``
(``REELGATE_DATABASE_URL``, ``REELGATE_MQTT_URL``, ``REELGATE_HTTP_LISTEN``,
``REELGATE_SERVE_POLL_INTERVAL`` ...; the first ``_`` after the section splits, so keys
keep their own underscores).  A few names older than the file keep working
(:data:`LEGACY_ENV`).  Each command then lets its own flags win over the result.

Every section forbids unknown keys, so a typo is an error rather than a setting silently
ignored.  Any problem is one :class:`~gateway.errors.OperatorError` naming where the value
came from and the key: ``/etc/reelgate/reelgate.toml: http.listen: must be HOST:PORT``
or ``$REELGATE_HTTP_LISTEN: http.listen: ...``.

:func:`shown` is the settings as ``config show`` prints them: passwords in URLs and any
secret-named key masked.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from gateway.errors import OperatorError
from storage.lease import DEFAULT_PERIOD

ENV_PREFIX = "REELGATE_"
DEFAULT_ZONE = "Africa/Johannesburg"  # = gateway.app.options.DEFAULT_ZONE
# Environment names in use before the configuration file, mapped to their key.
LEGACY_ENV: Mapping[str, tuple[str, str]] = {
    "REELGATE_SNMP_SECRETS": ("serve", "snmp_secrets"),
    "REELGATE_AUDIT_KEY_FILE": ("records", "audit_key_file"),
    "REELGATE_SIGNING_KEY_FILE": ("records", "signing_key_file"),
    "REELGATE_AUDIT_WITNESS": ("records", "witness"),
    "REELGATE_BACKUP_KEY_FILE": ("records", "backup_key_file"),
}
SECRET_WORDS = ("password", "secret", "token", "passphrase")
MASK = "***"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatabaseSection(Section):
    url: str | None = None  # None: ./reelgate.db (SQLite)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        scheme = value.split("://", 1)[0] if "://" in value else ""
        backend = scheme.split("+", 1)[0]
        if backend not in ("sqlite", "postgresql", "postgres"):
            raise ValueError("must be sqlite:///FILE or postgresql://USER@HOST/DB")
        return value


class MqttSection(Section):
    url: str | None = None  # the broker of the live feed and the signs (Mosquitto)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value:
            from protocols.mqtt.client import MqttSettings

            MqttSettings.from_url(value)  # ValueError names what is wrong
        return value or None


class VenueSection(Section):
    name: str = "venue"  # the site level of the MQTT feed tree
    time_zone: str = DEFAULT_ZONE  # log timestamps; times typed without an offset

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        from protocols.mqtt.topics import TopicError, check_segment

        try:
            return check_segment("venue name", value)
        except TopicError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("time_zone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{value!r} is not a time zone (e.g. {DEFAULT_ZONE})") from None
        return value


def host_port(spec: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8443`` for IPv6; port 0: a free one)."""
    host, _, port = spec.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError("must be HOST:PORT (port 0: a free one)")
    return host, int(port)


class HttpSection(Section):
    listen: str | None = None  # the desks' API; None: serve runs none, api needs --http
    tls_cert: Path | None = None
    tls_key: Path | None = None
    # Plain HTTP on an address other than loopback only when said in so many words.
    insecure_http: bool = False
    # Request bodies: at most this many bytes (checked before reading or signing in) ...
    max_body: Annotated[int, Field(ge=1024, le=64 * 1024 * 1024)] = 64 * 1024
    # ... each chunk within this many seconds; idle keep-alive connections closed after
    # keep_alive seconds; at most max_connections at once (more are answered 503).
    body_timeout: Annotated[float, Field(gt=0, le=600)] = 30.0
    keep_alive: Annotated[int, Field(ge=1, le=600)] = 5
    max_connections: Annotated[int, Field(ge=10, le=100_000)] = 1000

    @field_validator("listen")
    @classmethod
    def _listen(cls, value: str | None) -> str | None:
        if value is not None:
            host_port(value)
        return value

    @model_validator(mode="after")
    def _tls_pair(self) -> HttpSection:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together")
        return self


class LogSection(Section):
    format: Literal["json", "kv"] = "kv"
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    @field_validator("level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


class RecordsSection(Section):
    audit_key_file: Path | None = None  # gateway.records.keys: the audit log's HMAC key
    signing_key_file: Path | None = None  # Ed25519 key signing checkpoints and exports
    backup_key_file: Path | None = None  # AES key `db backup` encrypts with (backups.crypt)
    # Where each committed chain head is also written (gateway.records.witness): a file
    # kept apart from the database and its keys, syslog+udp|tcp://HOST:PORT, or none.
    # None: <sqlite file>.witness, or a file under ~/.local/state/reelgate/ for PostgreSQL.
    witness: str | None = None

    @field_validator("witness")
    @classmethod
    def _witness(cls, value: str | None) -> str | None:
        if value is None:
            return None
        from gateway.records.witness_sinks import parse_spec

        parse_spec(value)  # ValueError names what is wrong
        return value.strip()


class ServeSection(Section):
    floor: Path | None = None
    spool: Path = Path("reelgate-journal.spool")
    poll_interval: Annotated[float, Field(ge=0.2)] = (
        0.2  # SAS: one poll per machine every 0.2 s at most
    )
    tick: Annotated[float, Field(gt=0, le=60)] = 0.5
    standby: bool = False
    expect_standby: bool = False
    lease_period: Annotated[float, Field(ge=0.3, le=600)] = DEFAULT_PERIOD.total_seconds()
    snmp_secrets: Path | None = None
    snmp_traps: str = "127.0.0.1:0"
    # Multi-venue: the venue whose banks this gateway serves in a shared central database.
    venue: str | None = None
    # Synchronised starts (one heat across gateways): the lead, and the host clock limit.
    start_lead: Annotated[float, Field(ge=0, le=60)] = 0.0
    max_clock_offset: Annotated[float, Field(gt=0, le=10_000)] = 50.0  # ms

    @field_validator("venue")
    @classmethod
    def _venue(cls, value: str | None) -> str | None:
        from protocols.mqtt.topics import TopicError, check_segment

        if value is None:
            return None
        try:
            return check_segment("venue", value)
        except TopicError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("snmp_traps")
    @classmethod
    def _traps(cls, value: str) -> str:
        host_port(value)
        return value


class SignageSection(Section):
    host: str = "127.0.0.1"
    port: Annotated[int | None, Field(ge=0, le=65535)] = (
        None  # serve: off when unset; signage: 8080
    )


class _Sources(BaseSettings):
    """Shared source order: environment (and its older names) over the file's tables."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="forbid",
        frozen=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        legacy = InitSettingsSource(settings_cls, init_kwargs=_legacy_env())
        return env_settings, legacy, init_settings


class Settings(_Sources):
    database: DatabaseSection = DatabaseSection()
    mqtt: MqttSection = MqttSection()
    venue: VenueSection = VenueSection()
    http: HttpSection = HttpSection()
    log: LogSection = LogSection()
    records: RecordsSection = RecordsSection()
    serve: ServeSection = ServeSection()
    signage: SignageSection = SignageSection()


def _legacy_env() -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for name, (section, key) in LEGACY_ENV.items():
        value = os.environ.get(name)
        if value:
            found.setdefault(section, {})[key] = value
    return found


def read_file(path: Path) -> dict[str, Any]:
    """The file's tables (one line naming the file when it cannot be read as TOML)."""
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise OperatorError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise OperatorError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise OperatorError(f"{path}: not TOML: {exc}") from None
    for key, value in data.items():
        if key in Settings.model_fields and not isinstance(value, dict):
            raise OperatorError(f"{path}: {key}: must be a table ([{key}])")
    return data


def load_settings(path: Path | None) -> Settings:
    """The settings from ``path`` (None: defaults) with the environment over it."""
    data = read_file(path) if path is not None else {}
    try:
        return Settings(**data)
    except ValidationError as exc:
        raise OperatorError(_one_line(exc, path)) from None


def _one_line(exc: ValidationError, path: Path | None) -> str:
    """The first problem: where it came from, the dotted key, what is wrong."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"]]
    key = ".".join(loc) or "settings"
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "unknown key"
    return f"{_origin(loc, path)}: {key}: {message}"


def _origin(loc: list[str], path: Path | None) -> str:
    if loc:
        env = ENV_PREFIX + "_".join(loc[:2]).upper()
        if env in os.environ:
            return f"${env}"
        for name, where in LEGACY_ENV.items():
            if list(where) == loc[:2] and name in os.environ:
                return f"${name}"
    return str(path) if path is not None else "configuration"


def shown(settings: Settings) -> dict[str, dict[str, Any]]:
    """The settings as printed by ``config show``: every key, secrets masked."""
    out: dict[str, dict[str, Any]] = {}
    for section, values in settings.model_dump(mode="json").items():
        fields = type(getattr(settings, section)).model_fields
        out[section] = {
            key: _masked(key, value, path="Path" in str(fields[key].annotation))
            for key, value in values.items()
        }
    return out


def _masked(key: str, value: Any, *, path: bool) -> Any:
    """A file's name is shown (it is not the secret it holds); anything else named like
    a secret is masked, and so is a password inside a URL."""
    if value is None or isinstance(value, bool | int | float) or path:
        return value
    text = str(value)
    if any(word in key.lower() for word in SECRET_WORDS):
        return MASK
    return mask_url_password(text)


def mask_url_password(text: str) -> str:
    """``scheme://user:secret@host`` -> ``scheme://user:***@host`` (anything else as is)."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    authority, slash, tail = rest.partition("/")
    tail = re.sub(r"(?i)(password=)[^&]*", rf"\g<1>{MASK}", tail)  # asyncpg's ?password=
    userinfo, at, host = authority.rpartition("@")
    if not at or ":" not in userinfo:
        return f"{scheme}://{authority}{slash}{tail}"
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:{MASK}@{host}{slash}{tail}"
