"""A sale's tender from the command line, the same whether it runs here or over ``--server``."""

from __future__ import annotations

import argparse

from storage.enums import Tender


def sale_tender(args: argparse.Namespace) -> Tender:
    """``--tender``, or its older spellings ``--card-payment`` / ``--complimentary``."""
    if args.tender:
        return Tender(args.tender)
    if args.complimentary:
        return Tender.COMP
    return Tender.CARD if args.card_payment else Tender.CASH
