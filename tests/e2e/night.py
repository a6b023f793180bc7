"""The night's stage hands for :mod:`tests.e2e.test_night`: the host's command line as
real processes, the emulated floor (``reelgate emulate sas``) and ``reelgate serve`` in
their own processes, each line they print read by a pump thread; every wait is bounded.

The technician and the director work on the gateway host (``reelgate ...`` with the
database in ``REELGATE_DATABASE_URL``), a remote desk through ``--server`` with its token
in ``REELGATE_TOKEN``; dual control on the host reads the second person's password from
standard input, as documented (README, "Who made a change")."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]
START_S = 60.0  # bound on a process's start-up on a loaded 2-core machine
COMMAND_S = 120.0  # bound on one command
# The walk-up bank's broker: Mosquitto when REELGATE_MQTT_URL names one, else the
# embedded broker its emulated boards start (``reelgate emulate mqtt`` without --broker).
BROKER = os.environ.get("REELGATE_MQTT_URL", "")


def passwords() -> dict[str, str]:
    """Strong enough for the password policy (zxcvbn), one per account."""
    return {
        name: f"{name}-Night-Shift-{7311 + i}-orchid-tango"
        for i, name in enumerate(
            ("dana", "pieter", "naledi", "lee", "tumi", "thabo", "sam", "vusi", "ada", "tebogo")
        )
    }


class Lines:
    """A process's standard output, line by line, read by a thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self._q: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        out = proc.stdout
        assert out is not None

        def pump() -> None:  # ends when the process closes its output
            for line in out:
                self._q.put(line)

        threading.Thread(target=pump, daemon=True).start()

    def send(self, line: str) -> None:
        """A line on the process's standard input (one started with ``stdin=True``)."""
        assert self.proc.stdin is not None, "started without stdin"
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def until(self, cond: Callable[[str], bool], within: float = START_S) -> str:
        deadline = time.monotonic() + within
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._q.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if cond(line):
                return line
        raise AssertionError(f"no such line in {within} s; seen {self.seen[-10:]}")


@dataclass
class Host:
    """The gateway host's shell: ``reelgate`` against the night's database."""

    database: str
    work: Path
    procs: list[subprocess.Popen[str]] = field(default_factory=list)

    def env(self, **extra: str) -> dict[str, str]:
        # No broker in the environment: the signs are read from serve's own feed
        # (/signage/snapshot); the walk-up bank's boards and serve's card desk are given
        # one explicitly (``BROKER``, under a site of the night's own).
        env = {
            k: v for k, v in os.environ.items() if k not in ("REELGATE_TOKEN", "REELGATE_MQTT_URL")
        }
        env.update(
            PYTHONPATH=str(ROOT),
            REELGATE_DATABASE_URL=self.database,
            REELGATE_DESK="night",
        )
        env.update(extra)
        return env

    def run(
        self, *argv: str, stdin: str = "", ok: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "gateway", *argv],
            input=stdin, capture_output=True, text=True, cwd=self.work,
            env=env or self.env(), timeout=COMMAND_S,
        )  # fmt: skip
        if ok:
            assert done.returncode == 0, f"reelgate {' '.join(argv)}: {done.stderr}{done.stdout}"
        return done

    def json(self, *argv: str, stdin: str = "", env: dict[str, str] | None = None) -> Any:
        return json.loads(self.run(*argv, "--json", stdin=stdin, env=env).stdout)

    def start(self, *argv: str, env: dict[str, str] | None = None, stdin: bool = False) -> Lines:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway", *argv],
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, cwd=self.work, env=env or self.env(),
        )  # fmt: skip
        self.procs.append(proc)
        return Lines(proc)

    def stop_all(self) -> Iterator[int]:
        """SIGTERM each started process (a stopped one is continued first); its exit code."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=30)
            yield proc.returncode


def until(cond: Callable[[], Any], within: float, what: str, every: float = 0.5) -> Any:
    """Poll ``cond`` until it returns something true; bounded."""
    deadline = time.monotonic() + within
    got: Any = None
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(every)
    raise AssertionError(f"{what}: not reached in {within} s (last: {got!r})")


class Console:
    """The console in Chromium, one browser for the night's desks; each desk signs in
    through the login page (its CSRF token comes with the form) in a context of its own.
    Every page error fails the night."""

    def __init__(self, api: str) -> None:
        from playwright.sync_api import sync_playwright

        from tests.browser import CHROMIUM

        self.base = api.removesuffix("/api/v1") + "/console"
        self.errors: list[str] = []
        self._pw = sync_playwright().start()
        self._browser = self._pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])

    def close(self) -> None:
        self._browser.close()
        self._pw.stop()

    @contextmanager
    def desk(self, account: str, password: str) -> Iterator[Page]:
        from tests.browser import TABLET

        context = self._browser.new_context(viewport=TABLET)
        try:
            page = context.new_page()
            page.set_default_timeout(30_000)
            page.on("pageerror", lambda exc: self.errors.append(str(exc)))
            page.goto(f"{self.base}/login")
            page.get_by_label("Account").fill(account)
            page.get_by_label("Password").fill(password)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{self.base}/")
            yield page
        finally:
            context.close()
        assert self.errors == [], f"the console threw: {self.errors}"

    def screen(self, page: Page, name: str) -> None:
        page.get_by_role("navigation", name="Screens").get_by_role("link", name=name).click()

    def standings(self, page: Page, tournament: int) -> list[tuple[str, int]]:
        """The director's standings of ``tournament``: (player, credits) by place."""
        from playwright.sync_api import expect

        self.screen(page, "Standings")
        page.goto(f"{self.base}/standings?t={tournament}&stage=qualifying")
        rows = page.locator("#standings-table tbody tr[data-entry]")
        expect(rows.first).to_be_visible()
        return [
            (r.locator("td").nth(1).inner_text().strip(), int(r.locator(".credits").inner_text()))
            for r in rows.all()
        ]

    def approve(self, page: Page, kind: str) -> str:
        """Approvals: the second person approves the one request of ``kind``; the flash."""
        from playwright.sync_api import expect

        self.screen(page, "Approvals")
        row = page.locator("tr[data-pending]", has_text=kind)
        expect(row).to_have_count(1)
        row.get_by_role("button", name="Approve").click()
        page.locator("#confirm-ok").click()
        flash = page.locator(".flash.ok")
        expect(flash).to_be_visible()
        return flash.inner_text()

    def manual_score(
        self, page: Page, heat_id: int, player_name: str, credits: int, reason: str
    ) -> str:
        """A manual score (director or supervisor, T23): ``credits`` for the seat
        ``player_name`` plays in the collecting or closed heat ``heat_id``, with the
        reason; the flash.  It waits for a second person: ``approve(page,
        "heat.manual-score")`` in another account's desk."""
        from playwright.sync_api import expect

        page.goto(f"{self.base}/heats/{heat_id}/score")
        row = page.locator("tr[data-score-seat]", has_text=player_name)
        expect(row).to_have_count(1)
        row.get_by_role("link", name="Manual score for seat").click()
        form = page.locator("#score-form")
        form.get_by_label("Credits", exact=True).fill(str(credits))
        form.get_by_label("Reason (rule 23)").fill(reason)
        form.get_by_role("button", name="Ask for the manual score").click()
        flash = page.locator(".flash.ok")
        expect(flash).to_contain_text(f"({player_name}) asked (action")
        return flash.inner_text()

    def add_account(self, page: Page, name: str, role: str, password: str) -> str:
        """Accounts (admin): a new account with its first password; the flash."""
        from playwright.sync_api import expect

        self.screen(page, "Accounts")
        form = page.locator('form[action="/console/accounts/add"]')
        form.get_by_label("Name").fill(name)
        form.get_by_label("Role").select_option(role)
        form.get_by_label("Password", exact=True).fill(password)
        form.get_by_label("Password (again)").fill(password)
        form.get_by_role("button", name="Add account").click()
        flash = page.locator(".flash.ok")
        expect(flash).to_contain_text(name)
        return flash.inner_text()

    def create_token(self, page: Page, account: str, label: str, days: int) -> str:
        """Accounts (admin): an API token for ``account``; its secret, shown once."""
        from playwright.sync_api import expect

        self.screen(page, "Accounts")
        form = page.locator('form[action="/console/accounts/tokens"]')
        form.locator("select[name=account]").select_option(account)
        form.get_by_label("Days until expiry").fill(str(days))
        form.get_by_label("Label (what it is for)").fill(label)
        form.get_by_role("button", name="Create token").click()
        secret = page.locator("#token-secret")
        expect(secret).to_be_visible()
        return secret.input_value()

    def enable_bank(self, page: Page, bank: str) -> list[str]:
        """Floor (technician): check the bank, then enable it; each machine's check row."""
        from playwright.sync_api import expect

        page.goto(f"{self.base}/floor/{bank}")
        page.get_by_role("button", name=f"Check bank {bank}").click()
        rows = page.locator("[data-check]")
        expect(rows.first).to_be_visible()
        checked = [r.inner_text() for r in rows.all()]
        page.get_by_role("button", name=f"Enable bank {bank}").click()
        page.locator("#confirm-ok").click()
        expect(page.locator(".flash.ok")).to_contain_text(f"Bank {bank} enabled by")
        return checked

    def add_player(self, page: Page, name: str, id_number: str, dob: str, card: str) -> str:
        """Players (desk): a new player, checked T1-T4 by the service; the flash."""
        from playwright.sync_api import expect

        self.screen(page, "Players")
        form = page.locator('form[action="/console/players/add"]')
        form.get_by_label("Name").fill(name)
        form.get_by_label("ID or passport number").fill(id_number)
        form.get_by_label("Date of birth").fill(dob)
        form.get_by_label("Rewards card number (optional)").fill(card)
        form.get_by_role("button", name="Add player").click()
        flash = page.locator(".flash.ok")
        expect(flash).to_contain_text(f"player {name} added")
        return flash.inner_text()

    def create_tournament(self, page: Page, name: str, validity: str, notice_s: int) -> int:
        """Tournaments (director): a new tournament from its settings; its number."""
        from playwright.sync_api import expect

        self.screen(page, "Tournaments")
        form = page.locator('form[action="/console/tournaments/create"]')
        form.get_by_label("Name", exact=True).fill(name)
        form.get_by_label("Entry validity").select_option(validity)  # T5
        form.get_by_label("Notice of a heat change (s)").fill(str(notice_s))  # T10b
        form.get_by_role("button", name="Create tournament").click()
        expect(page.locator(".flash.ok")).to_contain_text(f"tournament {name} created")
        row = page.locator(f'[data-tournament="{name}"]')
        expect(row).to_contain_text(validity)
        return int(row.locator("td").first.inner_text())

    def schedule_heat(
        self, page: Page, tournament: str, bank: str, local_start: str, minutes: int,
        credits: int, announced_via: str = "",
    ) -> tuple[str, int]:  # fmt: skip
        """Schedule (director): a qualifying heat at ``local_start`` (venue time,
        YYYY-MM-DDTHH:MM), ``announced_via`` for one added after the cut (T10/T21); the
        flash, and the heat's number as the week shows it."""
        from playwright.sync_api import expect

        self.screen(page, "Schedule")
        page.goto(f"{self.base}/schedule?start={local_start[:10]}")
        form = page.locator("#new-heat")
        form.get_by_label("Tournament").select_option(label=tournament)
        form.get_by_label("Stage").select_option("qualifying")
        form.get_by_label("Bank").select_option(bank)
        form.get_by_label("Starts (venue time)").fill(local_start)
        form.get_by_label("Minutes").fill(str(minutes))
        form.get_by_label("Starting credits").fill(str(credits))
        form.get_by_label("Announced via").fill(announced_via)
        form.get_by_role("button", name="Schedule heat").click()
        flash = page.locator(".flash.ok")
        expect(flash).to_contain_text("scheduled")
        said = flash.inner_text()
        found = re.search(r"(qualifying heat \d+) scheduled", said)
        assert found, said
        slot = page.get_by_role("article", name=f"{found.group(1)} of {tournament}", exact=True)
        expect(slot).to_contain_text(local_start[11:16])
        return said, int(slot.get_attribute("data-heat") or 0)

    def move_heat(self, page: Page, heat: int, local_start: str, via: str, reason: str) -> str:
        """Schedule (director): the heat's Change panel moves it to ``local_start`` (venue
        time, YYYY-MM-DDTHH:MM), announced now via ``via`` (T10); the flash."""
        from playwright.sync_api import expect

        self.screen(page, "Schedule")
        page.goto(f"{self.base}/schedule?start={local_start[:10]}")
        slot = page.locator(f'article[data-heat="{heat}"]')
        slot.locator("summary", has_text="Change").click()
        move = slot.locator('form[data-form="reschedule"]')
        move.get_by_label("New start").fill(local_start)
        move.get_by_label("Announced via").fill(via)
        move.get_by_label("Reason").fill(reason)
        move.get_by_role("button", name="Move heat").click()
        flash = page.locator(".flash.ok")
        expect(flash).to_contain_text("moved to")
        expect(page.locator(f'article[data-heat="{heat}"] .when')).to_contain_text(
            local_start[11:16]
        )
        return flash.inner_text()

    def set_prizes(self, page: Page, tournament: int, stage: str, minimums: dict[int, int]) -> str:
        """Prizes (director): the stage's advertised minimum per place, in cents (T15);
        the flash."""
        from playwright.sync_api import expect

        self.screen(page, "Prizes")
        page.goto(f"{self.base}/prizes?t={tournament}&stage={stage}")
        form = page.locator('form[action="/console/prizes/schedule"]')
        keyed = "\n".join(f"{place}={cents}" for place, cents in sorted(minimums.items()))
        form.get_by_label("Advertised minimum per place").fill(keyed)
        form.get_by_role("button", name="Set schedule").click()
        flash = page.locator(".flash.ok")
        expect(flash).to_contain_text("schedule set")
        return flash.inner_text()

    def unpaid_prizes(self, page: Page, tournament: int) -> dict[str, str]:
        """Prizes (any desk): the places won and not yet paid, as ``stage:place`` ->
        the winner's name."""
        self.screen(page, "Prizes")
        page.goto(f"{self.base}/prizes?t={tournament}")
        out = {}
        for row in page.locator("[data-unpaid]").all():
            found = re.search(r"place \d+: (.+?) \(entry \d+\)", row.inner_text())
            assert found, row.inner_text()
            out[str(row.get_attribute("data-unpaid"))] = found.group(1)
        return out

    def ask_payout(
        self, page: Page, tournament: int, stage: str, place: int, signer: str, slip: str
    ) -> str:
        """Prizes (cashier): pay ``place`` to its winner, who signs by keying their ID
        number on the slip ``slip``; the payout then waits for its witness (T15). The
        flash."""
        from playwright.sync_api import expect

        self.screen(page, "Prizes")
        page.goto(f"{self.base}/prizes?t={tournament}&stage={stage}")
        won = page.locator(f'[data-unpaid="{stage}:{place}"]')
        won.get_by_label("Winner's ID or card number").fill(signer)
        won.get_by_label("Signature of receipt (slip reference)").fill(slip)
        won.get_by_role("button", name=f"Pay place {place} ({stage})").click()
        page.locator("#confirm-ok").click()
        flash = page.locator(".flash.ok")
        expect(flash).to_contain_text("waits for its witness")
        expect(won).to_contain_text("waiting for the witness")
        return flash.inner_text()

    def prizes(self, page: Page, tournament: int, stage: str) -> dict[int, str]:
        """Prizes (any desk): each advertised place of the stage -> its row as shown
        (advertised, total, holder, paid by whom, witnessed by whom)."""
        from playwright.sync_api import expect

        self.screen(page, "Prizes")
        page.goto(f"{self.base}/prizes?t={tournament}&stage={stage}")
        rows = page.locator("tr[data-place]")
        expect(rows.first).to_be_visible()
        return {int(r.get_attribute("data-place") or 0): r.inner_text() for r in rows.all()}

    def cashup(self, page: Page, day: str) -> dict[str, str]:
        """Cash-up (director): the day's figures as the screen shows them: entries sold and
        refunded, Super 9 buy-ins, tournament prizes paid, and each tender's money in and
        out."""
        from playwright.sync_api import expect

        self.screen(page, "Cash-up")
        page.goto(f"{self.base}/cashup?date={day}")
        expect(page.locator("#sold")).to_be_visible()
        keys = ("sold", "refunded", "buy-ins")
        shown = {key: page.locator(f"#{key}").inner_text() for key in keys}
        prizes = page.locator("#entries tr", has_text="Tournament prizes paid").locator("td")
        shown["prizes paid"] = prizes.inner_text()
        for row in page.locator("#by-tender tbody tr[data-tender]").all():
            cells = row.locator("td")
            tender = row.get_attribute("data-tender")
            shown[f"{tender} in"] = cells.nth(1).inner_text()
            shown[f"{tender} out"] = cells.nth(2).inner_text()
        return shown

    def sell_and_register(
        self, page: Page, tournament: int, player: str, *, tender: str, slip: str, heat: int
    ) -> tuple[str, str]:
        """The registration desk: find ``player`` by name, sell one entry on the till slip,
        read the receipt, register the player for ``heat``; (receipt, the desk's flash)."""
        from playwright.sync_api import expect

        self.screen(page, "Registration desk")
        page.goto(f"{self.base}/desk?t={tournament}")
        page.get_by_label("Player: name, Rewards card or ID number").fill(player.split()[-1])
        page.get_by_role("button", name="Find player").click()
        card = page.locator(f'[data-player="{player}"]')
        card.get_by_label("Tender").select_option(tender)
        card.get_by_label("Till slip").fill(slip)
        card.get_by_role("button", name=f"Sell to {player}").click()
        page.locator("#confirm-ok").click()
        receipt = page.get_by_role("article", name="receipt")
        expect(receipt).to_contain_text(slip)
        said = receipt.inner_text()
        page.goto(f"{self.base}/desk?t={tournament}&q={player.split()[-1]}")
        card = page.locator(f'[data-player="{player}"]')
        card.get_by_label("Heat").select_option(str(heat))
        card.get_by_role("button", name=f"Register {player}").click()
        flash = page.locator(".flash.ok")
        expect(flash).to_contain_text("registered")
        return said, flash.inner_text()

    # Super 9, keyed from paper: the "Keyed from paper" section of each form (S9-6; a
    # training database takes any keyed time, gateway/web/api/keyed_time.py).
    def _keyed(self, form: Any, keyed: str, reason: str = "") -> None:
        form.locator("details.keyed summary").click()
        form.get_by_label("Happened at (venue time)").fill(keyed)
        if reason:
            form.get_by_label("Why keyed late").fill(reason)

    def _s9_flash(self, page: Page, says: str) -> str:
        from playwright.sync_api import expect

        flash = page.locator(".flash.ok")
        expect(flash).to_contain_text(says)
        return flash.inner_text()

    def super9_calendar(self, page: Page, local: str, reason: str, keyed: str) -> str:
        """Super 9 (promotion director): a one-off session at ``local`` (venue time,
        YYYY-MM-DDTHH:MM) added to the calendar (S9-4); the flash."""
        page.goto(f"{self.base}/super9")
        form = page.locator("#calendar-change")
        form.get_by_label("Session at (venue time)").fill(local)
        form.get_by_label("Reason", exact=True).fill(reason)
        self._keyed(form, keyed)
        form.get_by_role("button", name="Change calendar").click()
        return self._s9_flash(page, "added (rule 4)")

    def super9_sell(
        self, page: Page, ticket: str, player: str, tender: str, keyed: str
    ) -> tuple[str, str]:
        """Super 9 (cashier): a ticket sold at the cash desk (S9-5); the flash, which
        names the session, the price and the tender, and the sale's receipt."""
        self.screen(page, "Super 9")
        form = page.locator('form[action="/console/super9/sell"]')
        form.get_by_label("Ticket serial").fill(ticket)
        form.get_by_label("Player: ID or Rewards card number").fill(player)
        form.get_by_label("Tender").select_option(tender)
        self._keyed(form, keyed)
        form.get_by_role("button", name="Sell ticket").click()
        said = self._s9_flash(page, f"ticket {ticket} sold for the session of")
        return said, page.get_by_role("article", name="receipt").inner_text()

    def super9_hand_in(
        self, page: Page, ticket: str, numbers: str, name: str, id_number: str, contact: str,
        keyed: str,
    ) -> str:  # fmt: skip
        """Super 9 (promotion director or Guest Relations): the top copy keyed with its
        verification section, signed (S9-6 to S9-11); the flash."""
        page.goto(f"{self.base}/super9")
        form = page.locator('form[action="/console/super9/hand-in"]')
        form.get_by_label("Ticket serial").fill(ticket)
        form.get_by_label("Nine numbers").fill(numbers)
        form.get_by_label("Name on the verification section").fill(name)
        form.get_by_label("ID number").fill(id_number)
        form.get_by_label("Contact").fill(contact)
        form.get_by_label("signed by the player").check()
        self._keyed(form, keyed)
        form.get_by_role("button", name="Take hand-in").click()
        return self._s9_flash(page, f"ticket {ticket} handed in")

    def super9_open(self, page: Page, local: str, keyed: str) -> int:
        """Super 9 (promotion director): the session at ``local`` opened for the draw
        (after its hand-in cut-off, S9-6c); its number."""
        page.goto(f"{self.base}/super9")
        form = page.locator('form[action="/console/super9/open"]')
        form.locator("details.keyed summary").click()
        form.get_by_label("Session at (venue time)").fill(local)
        form.get_by_label("Happened at (venue time)").fill(keyed)
        form.get_by_role("button", name="Open for the draw").click()
        page.locator("#confirm-ok").click()
        said = self._s9_flash(page, "open for the draw")
        found = re.search(r"session (\d+) \(", said)
        assert found, said
        return int(found.group(1))

    def super9_manual_spin(self, page: Page, session: int, number: int, reason: str) -> str:
        """Super 9 (dealer): a manual spin keyed twice (S9-29); it waits for the second
        person: ``approve(page, "super9.manual-spin")`` in another account's desk."""
        page.goto(f"{self.base}/super9/sessions/{session}")
        form = page.locator(f'form[action="/console/super9/sessions/{session}/manual-spin"]')
        form.get_by_label("Number", exact=True).fill(str(number))
        form.get_by_label("Number again").fill(str(number))
        form.get_by_label("Why the wheel feed is not used").fill(reason)
        form.get_by_role("button", name="Key manual spin").click()
        return self._s9_flash(page, "waits for the second person")

    def super9_spins(self, page: Page, session: int) -> list[str]:
        """Super 9 (any Super 9 desk): the session's spins as the live draw shows them."""
        from playwright.sync_api import expect

        page.goto(f"{self.base}/super9/sessions/{session}")
        rows = page.locator("[data-spin]")
        expect(rows.first).to_be_visible()
        return [r.inner_text() for r in rows.all()]

    def super9_close(self, page: Page, session: int) -> str:
        """Super 9 (promotion director): the session closed, its prizes and the jackpot
        fixed (S9-15, S9-27); the flash."""
        page.goto(f"{self.base}/super9/sessions/{session}")
        page.get_by_role("button", name="Close session").click()
        page.locator("#confirm-ok").click()
        return self._s9_flash(page, f"session {session} closed")

    def super9_jackpot(self, page: Page) -> str:
        """Super 9: the progressive jackpot as the desk shows it."""
        page.goto(f"{self.base}/super9")
        return page.locator("#jackpot").inner_text()


def machine_results(database: str) -> dict[tuple[int, str], int]:
    """Each machine's score as the gateway read it from the machine (the journal's
    ``heat_result``), by heat and machine id."""
    import asyncio

    from sqlalchemy import select

    from storage.db import make_engine
    from storage.journal import HeatResult, HeatRun

    async def go() -> dict[tuple[int, str], int]:
        url = database.replace("sqlite://", "sqlite+aiosqlite://").replace(
            "postgresql://", "postgresql+asyncpg://"
        )
        engine = make_engine(url)
        try:
            async with engine.connect() as conn:
                query = (
                    select(HeatRun.heat_id, HeatResult.machine_id, HeatResult.score)
                    .join(HeatRun, HeatRun.id == HeatResult.run_id)
                    .order_by(HeatResult.run_id)
                )  # a restarted heat: its last run counts
                rows = (await conn.execute(query)).all()
                return {(h, m): s for h, m, s in rows if h is not None}
        finally:
            await engine.dispose()

    return asyncio.run(go())
