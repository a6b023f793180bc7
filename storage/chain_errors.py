"""The audit chain's one operator-facing error, in a module that imports nothing (the
command line catches it without loading the database layers)."""


class AuditKeyMissing(RuntimeError):
    """A write to the audit chain with no audit key bound (one line, says what to do)."""
