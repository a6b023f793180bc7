"""Alembic environment of Reelgate (run through :mod:`storage.migrate`)."""
