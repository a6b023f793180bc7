"""What a venue sets for its screens: title, logo, colours, time zone, paging, footers.

A small frozen object, given to :func:`gateway.web.signage.app.signage_router` by the
command line (``reelgate signage --title … --logo … --colour accent=#35c2ff``) until the
venue's configuration file carries it.  Every value is checked here, once, so a page
never renders a colour or a zone it cannot use: a bad one is a :class:`ValueError`
naming the field (the command turns it into one line, exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# The colours a venue may change (CSS custom properties of signage.css).
COLOUR_NAMES = ("background", "panel", "text", "muted", "accent", "gold", "fault")
_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_LOGO_TYPES = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg",
               ".jpeg": "image/jpeg", ".webp": "image/webp"}  # fmt: skip
MAX_LOGO_BYTES = 2 * 1024 * 1024

# Rule numbers of the two rule sheets (docs/rules.md): each board carries its own.
TOURNAMENT_FOOTER = (
    "Tournament credits have no cash value (rule 12). "
    "Ties are decided by a card draw (rule 19)."
)
SUPER9_FOOTER = (
    "Super 9: all nine numbers within 18 counted spins wins the jackpot (rule 14). "
    "Prizes are not transferable (rule 26)."
)


@dataclass(frozen=True)
class SignageSettings:
    title: str = "Reelgate"
    logo: Path | None = None  # png, svg, jpg or webp, served as /signage/logo
    colours: Mapping[str, str] = field(default_factory=dict)
    venue_tz: str = "Africa/Johannesburg"
    page_seconds: float = 8.0  # a bank longer than the screen turns a page this often
    tournament_footer: str = TOURNAMENT_FOOTER
    super9_footer: str = SUPER9_FOOTER

    def __post_init__(self) -> None:
        if not self.title.strip() or len(self.title) > 80:
            raise ValueError("title: 1 to 80 characters")
        try:
            ZoneInfo(self.venue_tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"venue time zone {self.venue_tz!r}: not a known zone") from None
        if not 2.0 <= self.page_seconds <= 120.0:
            raise ValueError(f"page seconds {self.page_seconds}: must be 2..120")
        for name, value in self.colours.items():
            if name not in COLOUR_NAMES:
                raise ValueError(f"colour {name!r}: one of {', '.join(COLOUR_NAMES)}")
            if not _HEX.match(value):
                raise ValueError(f"colour {name}={value!r}: use #rgb or #rrggbb")
        object.__setattr__(self, "colours", MappingProxyType(dict(self.colours)))
        if self.logo is not None:
            self._check_logo(self.logo)

    @staticmethod
    def _check_logo(logo: Path) -> None:
        if logo.suffix.lower() not in _LOGO_TYPES:
            raise ValueError(f"logo {logo}: use {', '.join(sorted(_LOGO_TYPES))}")
        if not logo.is_file():
            raise ValueError(f"logo {logo}: no such file")
        if logo.stat().st_size > MAX_LOGO_BYTES:
            raise ValueError(f"logo {logo}: larger than {MAX_LOGO_BYTES // 1024} KiB")

    @property
    def logo_type(self) -> str | None:
        return None if self.logo is None else _LOGO_TYPES[self.logo.suffix.lower()]

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.venue_tz)


def parse_colours(specs: Iterable[str]) -> dict[str, str]:
    """``["accent=#35c2ff", …]`` (the command's ``--colour`` values) to a mapping."""
    out: dict[str, str] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep:
            raise ValueError(f"colour {spec!r}: use NAME=#rrggbb")
        out[name.strip()] = value.strip()
    return out
