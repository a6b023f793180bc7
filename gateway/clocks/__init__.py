"""Honest clocks: when a keyed time (``--now``) may stand in for the real time of a write."""
