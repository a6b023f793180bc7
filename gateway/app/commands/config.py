"""``reelgate config check|show``: the installation's settings (:mod:`gateway.app.settings`).

``check`` reads the file in effect and the environment over it, validates every key,
and checks that the files it names are there (floor, spool folder, TLS certificate and
key, record keys, SNMP secrets): one line and exit 2 on the first problem, else one line
naming the file.  ``show`` prints the settings in effect, section by section, as TOML
(or ``--json``), with passwords in URLs and secret-named keys masked.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gateway.app.configfile import add_config, config_path, settings_of
from gateway.app.options import add_json
from gateway.errors import OperatorError

if TYPE_CHECKING:
    from gateway.app.settings import Settings


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "config", help="check or show the configuration (file and environment)"
    )
    actions = parser.add_subparsers(dest="config_action", required=True, metavar="ACTION")
    check = actions.add_parser("check", help="validate the configuration and the files it names")
    add_config(check)
    check.set_defaults(handler=_check)
    show = actions.add_parser("show", help="print the settings in effect (secrets masked)")
    add_config(show)
    add_json(show)
    show.set_defaults(handler=_show)


def _where(args: argparse.Namespace) -> str:
    path = config_path(args)
    return str(path) if path is not None else "no configuration file (defaults and environment)"


def _check(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    origin = str(config_path(args) or "configuration")
    for key, path, kind in named_files(settings):
        folder = path.resolve().parent
        if kind == "folder":
            if not folder.is_dir():
                raise OperatorError(f"{origin}: {key}: folder {folder} does not exist")
        elif not path.is_file():
            raise OperatorError(f"{origin}: {key}: no such file {path}")
    print(f"{_where(args)}: ok")
    return 0


def named_files(settings: Settings) -> list[tuple[str, Path, str]]:
    """(key, path, "file" or "folder") for every path the settings name."""
    found: list[tuple[str, Path, str]] = [("serve.spool", settings.serve.spool, "folder")]
    for key, path in (
        ("serve.floor", settings.serve.floor),
        ("serve.snmp_secrets", settings.serve.snmp_secrets),
        ("http.tls_cert", settings.http.tls_cert),
        ("http.tls_key", settings.http.tls_key),
        ("records.audit_key_file", settings.records.audit_key_file),
        ("records.signing_key_file", settings.records.signing_key_file),
        ("records.backup_key_file", settings.records.backup_key_file),
    ):
        if path is not None:
            found.append((key, path, "file"))
    return found


def _show(args: argparse.Namespace) -> int:
    from gateway.app.settings import shown

    values = shown(settings_of(args))
    if args.json:
        print(json.dumps({"file": str(config_path(args) or ""), "settings": values}, indent=2))
        return 0
    print(f"# {_where(args)}")
    for section, keys in values.items():
        print(f"\n[{section}]")
        for key, value in keys.items():
            print(f"{key} = {_toml(value)}" if value is not None else f"# {key} (not set)")
    return 0


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value))  # a TOML basic string is a JSON string
