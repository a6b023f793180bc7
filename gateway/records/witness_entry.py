"""The witness's one-line entries: format and parse (sans-I/O).

An entry is one ASCII line, the same in the witness file and as the MSG of a syslog
message (a collector's file holds it after its own prefix, so the parser finds it
anywhere in a line)::

    reelgate-witness/1 head <position> <mac> <at> <key id> <tag>
    reelgate-witness/1 restore <restored to> <lost up to> <at> <key id> <tag>

``head``: the chain stood at ``position`` with that MAC when a commit returned.
``restore``: ``reelgate db restore`` put back a backup ending at ``restored to`` while the
witness had seen positions up to ``lost up to`` (written before the restore's audit
row).  ``tag`` is HMAC-SHA256 under the audit key over everything before it (first 32
hex digits), so someone without the key can neither forge an entry nor turn a
rollback into a "restore"; ``key id`` (:attr:`storage.audit.ChainKeys.key_id`) tells
entries of another key apart.
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

MAGIC = "reelgate-witness/1"
RESTORE_ACTION = "audit.restore"  # the audit row of ``reelgate db restore``
_TAG_LABEL = b"reelgate audit witness\n"
_TAG_HEX = 32
_LINE = re.compile(MAGIC + r" (head|restore) (\d{1,19}) (\S+) (\S+) ([0-9a-f]{16}) ([0-9a-f]{32})")
Kind = Literal["head", "restore"]


@dataclass(frozen=True)
class Entry:
    """``head``: ``position`` and ``mac``; ``restore``: ``position`` is the restored
    head, ``lost_to`` the last position the witness had seen before it."""

    kind: Kind
    position: int
    mac: str
    at: datetime
    key_id: str
    lost_to: int = 0
    line_no: int = 0

    def fields(self) -> str:
        middle = self.mac if self.kind == "head" else str(self.lost_to)
        instant = self.at.isoformat(timespec="microseconds")
        return f"{MAGIC} {self.kind} {self.position} {middle} {instant} {self.key_id}"


def tag(mac_key: bytes, fields: str) -> str:
    return hmac.digest(mac_key, _TAG_LABEL + fields.encode("ascii"), "sha256").hex()[:_TAG_HEX]


def format_entry(mac_key: bytes, entry: Entry) -> str:
    """The line (no newline) for ``entry``, tagged under ``mac_key``."""
    fields = entry.fields()
    return f"{fields} {tag(mac_key, fields)}"


@dataclass(frozen=True)
class Unreadable:
    """A line that carries the marker but is not a well-formed, authentic entry."""

    line_no: int
    problem: str


def parse(text: str, mac_key: bytes, key_id: str) -> tuple[list[Entry], list[Unreadable], int]:
    """Entries under this key in file order, lines that claim to be entries but are not
    (bad form, bad tag), and how many authentic-looking entries name another key."""
    entries: list[Entry] = []
    bad: list[Unreadable] = []
    other_keys = 0
    for number, line in enumerate(text.splitlines(), start=1):
        start = line.find(MAGIC)
        if start < 0:
            continue
        found = _LINE.match(line, start)
        if found is None:
            bad.append(Unreadable(number, "not a witness entry (damaged line)"))
            continue
        kind, position, middle, at_text, entry_key, given_tag = found.groups()
        if entry_key != key_id:
            other_keys += 1
            continue
        fields = found.group(0).rsplit(" ", 1)[0]
        if not hmac.compare_digest(tag(mac_key, fields), given_tag):
            bad.append(Unreadable(number, "tag does not verify (forged or altered)"))
            continue
        try:
            at = datetime.fromisoformat(at_text)
            entry = (
                Entry("head", int(position), middle, at, entry_key, line_no=number)
                if kind == "head"
                else Entry("restore", int(position), "", at, entry_key, int(middle), number)
            )
        except ValueError:
            bad.append(Unreadable(number, "not a witness entry (damaged line)"))
            continue
        entries.append(entry)
    return entries, bad, other_keys
