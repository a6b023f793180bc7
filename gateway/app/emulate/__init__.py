"""Sub-commands of ``reelgate emulate``: one module per emulated device kind.

Each module defines ``register(subparsers)`` adding e.g. ``sas``, ``mqtt`` or ``wheel``.
"""
