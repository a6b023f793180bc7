"""Slot tournament rules engine (placeholder docstring, completed with the services)."""
