"""Which configuration file is in effect, and the settings read from it, on demand.

``--config FILE``, else ``$REELGATE_CONFIG``, else ``/etc/reelgate/reelgate.toml`` when it
exists; with none of them the settings are the defaults with the environment over them.
The settings model (:mod:`gateway.app.settings`) loads pydantic-settings, which takes a
quarter of a second to import: a quick command such as ``reelgate tournament list`` only
loads it when a configuration file is in effect (``REELGATE_DATABASE_URL`` alone is read
by :func:`storage.db.database_url` as before).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gateway.app.defaults import DEFAULT_SPOOL
from gateway.errors import OperatorError

if TYPE_CHECKING:
    from gateway.app.settings import Settings

DEFAULT_FILE = Path("/etc/reelgate/reelgate.toml")
CONFIG_ENV = "REELGATE_CONFIG"
_CACHE = "_reelgate_settings"


def add_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        default=None,
        help=f"configuration file (TOML; default: ${CONFIG_ENV}, else {DEFAULT_FILE} if it "
        "exists); REELGATE_<SECTION>_<KEY> variables override it, flags override both",
    )


def config_path(args: argparse.Namespace | None = None) -> Path | None:
    """The file in effect, or None (defaults and the environment only)."""
    given = getattr(args, "config", None)
    source = "--config"
    if not given and os.environ.get(CONFIG_ENV):
        given, source = os.environ[CONFIG_ENV], f"${CONFIG_ENV}"
    if given:
        path = Path(given).expanduser()
        if not path.is_file():
            raise OperatorError(f"{source} {path}: no such file")
        return path
    return DEFAULT_FILE if DEFAULT_FILE.is_file() else None


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings for this command line, read once."""
    cached: Settings | None = getattr(args, _CACHE, None)
    if cached is None:
        from gateway.app.settings import load_settings

        cached = load_settings(config_path(args))
        setattr(args, _CACHE, cached)
    return cached


def apply_config(args: argparse.Namespace) -> None:
    """Fill ``--database`` and ``--spool`` from the configuration when the flags were not
    given and a file is in effect (the environment alone needs no settings model)."""
    wants_database = hasattr(args, "database") and not args.database
    wants_spool = hasattr(args, "spool") and not args.spool
    has_file = config_path(args) is not None
    configured = has_file or bool(os.environ.get("REELGATE_SERVE_SPOOL"))
    if (wants_database or wants_spool or has_file) and configured:
        settings = settings_of(args)
        if wants_database:
            args.database = settings.database.url
        if wants_spool:
            args.spool = str(settings.serve.spool)
        _record_keys_from(settings)
    if hasattr(args, "spool") and not args.spool:
        args.spool = str(DEFAULT_SPOOL)


def _record_keys_from(settings: Any) -> None:
    """``[records]`` names the key files and the witness; the audit chain and the exports
    read them from ``REELGATE_AUDIT_KEY_FILE`` / ``REELGATE_SIGNING_KEY_FILE`` /
    ``REELGATE_AUDIT_WITNESS`` (an explicit variable wins), ``db backup`` and ``db restore``
    from ``REELGATE_BACKUP_KEY_FILE``."""
    for env, path in (
        ("REELGATE_AUDIT_KEY_FILE", settings.records.audit_key_file),
        ("REELGATE_SIGNING_KEY_FILE", settings.records.signing_key_file),
        ("REELGATE_AUDIT_WITNESS", settings.records.witness),
        ("REELGATE_BACKUP_KEY_FILE", settings.records.backup_key_file),
    ):
        if path is not None and not os.environ.get(env):
            os.environ[env] = str(path)


def fill_unset(args: argparse.Namespace, values: dict[str, object]) -> None:
    """Flags win: each option left unset on the command line takes the configured value
    (paths as text, like the flags give them)."""
    for name, value in values.items():
        if getattr(args, name, None) is None:
            setattr(args, name, str(value) if isinstance(value, Path) else value)
