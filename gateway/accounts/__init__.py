"""Accounts and roles: who may do what (:mod:`.roles`, the one permission table), which
actions need a second person (:mod:`.dual`), the login backoff (:mod:`.lockout`) — all
pure — and the database services over them (:mod:`.service`)."""
