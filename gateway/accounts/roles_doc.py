"""docs/roles.md, generated from the permission table (:data:`.roles.PERMISSIONS`) and the
dual-control approvers (:data:`.dual.APPROVERS`), so the page cannot drift from the code.

``python -m gateway.accounts.roles_doc`` rewrites docs/roles.md; ``--check`` only says
whether it is current (exit 1 if not).  A test compares the file with :func:`render`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gateway.accounts.dual import APPROVERS
from gateway.accounts.roles import Role, role_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "roles.md"

_HEAD = """\
# Roles and permissions

One table, generated from `gateway/accounts/roles.py` (`PERMISSIONS`) and
`gateway/accounts/dual.py` (`APPROVERS`) by `python -m gateway.accounts.roles_doc`;
`reelgate users roles` prints the same.  Every HTTP route names its permission
(`x-permission` in `/api/openapi.json`), and `tests/gateway/web/api/test_permissions.py`
checks each route against this table.
"""

_TAIL = """\
Dual control: the first account's request is tried against the service (rolled back), so
a refusal comes at once in the rule's words; otherwise it becomes a pending action
(`GET /api/v1/pending`).  A different account (compared by user id; names are
normalised at creation, so `Dealer`, `dealer` and `dealer ` are one account) with an
approving role approves it (`POST /api/v1/pending/{id}/approve`) and it runs then, under
the requester's name; `dual.request` and `dual.approve` are both in the audit log.

Only an account whose role may approve the action rejects it
(`POST /api/v1/pending/{id}/reject`, `dual.reject`), or the requester, withdrawing it
(`dual.withdraw`); any other account (a read-only auditor, a dealer) is refused with a
403 naming the roles that may.  Disabling an account (`reelgate users disable`) voids its
pending actions in the same transaction (`dual.void`, status `void`), and an approval
re-checks the requester, enabled and its role still holding the permission, since the
action runs under the requester's name.  Enabling it again (`reelgate users enable`,
`POST /api/v1/users/{id}/enable`, the console's Accounts screen) is `accounts.manage`
alone, like disabling it, and audited as `user.enable`; only its password works again:
the voided actions stay void, the ended sessions ended and the API tokens the disable
revoked (`token.revoke`) revoked.  Neither is dual control: they are the admin's, and a
venue often has one.

On the gateway host both people of a dual-control command are accounts, each proven by
its password: the first signs in with `--as ACCOUNT` (a role that may ask for the action)
and the write is recorded under it, the host login (`os:ACCOUNT@HOST`) beside it in the
audit row's `first_person`; the second is named by the command's own option (`--second`,
`--confirmed-by`, `--approved-by`, `--witness`; a role of the last column) and recorded
in `second_person`.  The two are compared by account id, so neither a second spelling of
one name nor the host login with an account of the same name makes two people.

The API never takes an actor name from the client: every write is audited under the
authenticated account (bearer token from `reelgate tokens create`, or a browser session
from `POST /api/v1/login`, whose writes must carry `X-CSRF-Token`).

Signing in (`POST /api/v1/login`, the console's form, a second person's password at the
command line; `gateway/accounts/signin.py`): each failed password is counted on the
account in one `UPDATE ... RETURNING`, so concurrent tries are all counted and only one
at a time is tried; after 3 failures each next try waits twice as long (2 s, 4 s, ... at
most 15 minutes), never for good; `reelgate users unlock NAME` (or a password reset)
clears it at once.  A source address is slowed the same way after 10 failures whatever
names it tries, and a name that is no account backs off as an account would (the answers
do not tell which names exist; both cost one argon2 verify).  A try refused while it
waits is 429 with `Retry-After`.  Every failure is audited as `user.login-failed` (actor
`anonymous@ADDRESS`; an unknown name as `user:?`, never the name typed), every lock as
`user.login-locked` or `login.source-locked`.  A sign-in posted from another site
(`Origin`, `Sec-Fetch-Site`, `Referer`) is refused (403); the console's form carries a
login CSRF token of its own as well.  A successful sign-in stamps the account's last
sign-in (`users.last_login_at`, sealed with the row; shown by `reelgate users list`,
`GET /api/v1/users` and the console's Accounts screen); a bearer token's use is not a
sign-in and does not.

Passwords (`users add`, `users reset-password`): at least 10 characters, not one
character repeated, and not easy to guess by zxcvbn (score 3 of 4; its lists of common
passwords, words and names ship with the package; the account's name counts as known).
A refusal is one line naming the rule.
"""


def render() -> str:
    roles = ", ".join(f"`{r.value}`" for r in Role)
    approvers = {p.value: sorted(r.value for r in rs) for p, rs in APPROVERS.items()}
    rows = [
        f"| `{permission}` | {', '.join(who)} | {', '.join(approvers.get(permission, []))} |"
        for permission, who in role_table()
    ]
    return "\n".join(
        [
            _HEAD,
            f"Roles: {roles}. `auditor` is read-only;",
            "`admin` manages accounts only (separation of duties).",
            "",
            "| permission | roles | dual control: approved by a second account of |",
            "|---|---|---|",
            *rows,
            "",
            _TAIL,
        ]
    )


def main(argv: list[str]) -> int:
    text = render()
    if argv == ["--check"]:
        current = DOC.read_text(encoding="utf-8") == text
        print(f"{DOC}: {'current' if current else 'out of date; run without --check'}")
        return 0 if current else 1
    if argv:
        print("usage: python -m gateway.accounts.roles_doc [--check]", file=sys.stderr)
        return 2
    DOC.write_text(text, encoding="utf-8")
    print(f"{DOC}: written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
