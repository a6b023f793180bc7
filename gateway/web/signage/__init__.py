"""The signage boards: bank, tournament leaderboard, Super 9 and the floor board, in
landscape, portrait and bank-topper layouts (``docs/signage.md``)."""

from gateway.web.signage.app import Layout, Signage, create_signage_app, mount_signage
from gateway.web.signage.settings import SignageSettings

__all__ = ["Layout", "Signage", "SignageSettings", "create_signage_app", "mount_signage"]
