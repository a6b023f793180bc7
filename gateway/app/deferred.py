"""A command's handler named, not imported, while its parser is built.

``reelgate tournament list`` parses its line before it knows which handler runs, and the
handlers of a command share modules heavy to import (SQLAlchemy, the models, the
services).  A parser module names each handler as ``Deferred("module:function")``;
the module is imported only when that handler is called, so a desk read over the API
(``--server``) never loads the database layer, and ``--help`` of a command loads
nothing but its parser.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True, slots=True)
class Deferred:
    """``module:function``, the module dotted from the package root
    (``gateway.app.commands.tournament_handlers:create``)."""

    target: str

    def __post_init__(self) -> None:
        module, sep, name = self.target.partition(":")
        if not (module and sep and name.isidentifier()):
            raise ValueError(f"Deferred({self.target!r}): expected 'package.module:function'")

    def resolve(self) -> Handler:
        module, _, name = self.target.partition(":")
        return cast(Handler, getattr(importlib.import_module(module), name))

    def __call__(self, args: argparse.Namespace) -> int:
        return self.resolve()(args)
