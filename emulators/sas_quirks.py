"""Quirks of real EGMs, for an emulated machine to reproduce (docs/sas.md, real machines).

Each is a way a machine met in the field bends SAS's letter while its bytes stay a SAS
conversation; the host must tolerate it where no money rides on it.  Off by default: the
emulator is a strict EGM unless told otherwise.

``base-percent-bcd``  LP 1F's base percent as 4 BCD bytes (92.50 % -> ``00 00 92 50``,
                      95.00 % -> ``00 00 95 00``) instead of 4 ASCII digits
``ack-echo``          an ACK-only poll answered with the address followed by the rest of
                      the poll echoed (LP 01 to address 1 -> ``01 01 51 08``)
"""

from __future__ import annotations

from dataclasses import dataclass

from protocols.sas import FieldQuirk, MachineInfoReply, bcd_encode

QUIRK_NAMES = ("base-percent-bcd", "ack-echo")


@dataclass(frozen=True, slots=True)
class Quirks:
    base_percent_bcd: bool = False
    ack_echo: bool = False

    @classmethod
    def parse(cls, text: str) -> Quirks:
        """``"base-percent-bcd,ack-echo"`` -> Quirks; ValueError naming an unknown one."""
        names = [n.strip() for n in text.split(",") if n.strip()]
        unknown = [n for n in names if n not in QUIRK_NAMES]
        if unknown:
            raise ValueError(f"unknown quirk {unknown[0]!r} (known: {', '.join(QUIRK_NAMES)})")
        return cls(base_percent_bcd="base-percent-bcd" in names, ack_echo="ack-echo" in names)

    def names(self) -> list[str]:
        flags = (self.base_percent_bcd, self.ack_echo)
        return [n for n, on in zip(QUIRK_NAMES, flags, strict=True) if on]

    def machine_info(self, reply: MachineInfoReply) -> MachineInfoReply:
        """``reply`` as this machine sends it."""
        if not self.base_percent_bcd or not reply.base_percent.isdigit():
            return reply
        raw = bcd_encode(int(reply.base_percent), 4)
        return MachineInfoReply(
            reply.addr,
            reply.game_id,
            reply.additional_id,
            reply.denomination,
            reply.max_bet,
            reply.progressive_group,
            reply.game_options,
            reply.paytable_id,
            raw.hex(" "),
            (FieldQuirk("base percent", raw, "is not ASCII digits"),),
        )
