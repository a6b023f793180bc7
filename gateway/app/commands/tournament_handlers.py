"""The handlers of ``reelgate tournament ...`` (its parser: :mod:`.tournament`), imported
only when one of them runs."""

from __future__ import annotations

import argparse
import json
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.app.commands import tournament_prizes_handlers as tournament_prizes
from gateway.app.database import run
from gateway.app.identity import host_actor
from gateway.app.options import now_of, parse_time
from gateway.app.output import MANUAL_MARK, emit, rands
from gateway.errors import OperatorError
from gateway.tournament import services as svc
from gateway.tournament.rules.cards import Card, parse_seed
from gateway.tournament.rules.enums import DrawnBy, HeatStatus, Stage
from gateway.tournament.services.amendments import amended_entries
from gateway.tournament.services.common import find_tournament, load_settings
from gateway.tournament.services.draws import DrawnCard
from gateway.tournament.services.finals import verify_seat_draws
from gateway.tournament.services.setup import change_settings
from gateway.tournament.settings import DEFAULT_PACKAGES, Package, TournamentSettings, Validity
from storage.floor import venues_of_entries
from storage.tournament import Heat, Tournament


def _package(text: str) -> Package:
    parts = text.split(":")
    try:
        if len(parts) not in (3, 4):
            raise ValueError
        credit = int(parts[3]) if len(parts) == 4 else 0
        return Package(parts[0], int(parts[1]), int(parts[2]), credit)
    except ValueError:
        raise OperatorError(f"--package {text!r}: expected CODE:CENTS:SEATS[:CREDIT]") from None


# (key for ``tournament set``, what it is, rule) in the order a director reads them.
_SETTING_ROWS = (
    ("venue_zone", "venue time zone", ""),
    ("seat_price_cents", "price of one seat", "5"),
    ("validity", "entry validity: same-day (rules 7/8) or 48h (rules 5/6)", "5-8"),
    ("minimum_age", "minimum age", "1"),
    ("direct_final_places", "top single entries straight to the final", "13"),
    ("semi_final_qualifiers", "next entries to the semi-finals", "14"),
    ("finalists_from_semis", "finalists from the semi-final ranking", "17"),
    ("prize_places", "places that need a strict order", "19"),
    ("postpone_after_s", "a failed heat is postponed after", "20"),
    ("reschedule_notice_s", "a heat change is announced at least", "10"),
    ("unmarked_at_start", "seats unmarked by the roll call at the start", "22"),
    ("format", "how a heat ends per machine: timed, games-limited, credit-limited", "F1"),
    ("games_per_seat", "games each machine plays (games-limited)", "F2"),
    ("minimum_bet", "a machine under this many credits is done (credit-limited)", "F3"),
)


def _shown(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if key.endswith("_cents"):
        return f"{rands(value)} ({value} c)"
    if key.endswith("_s"):
        return f"{value // 60} min ({value} s)"
    return str(value)


def _settings_out(
    args: argparse.Namespace, tid: int, name: str, settings: TournamentSettings
) -> int:
    data = settings.to_json()
    if args.json:
        return emit(args, {"id": tid, "name": name, "settings": data})
    print(f"tournament {tid}: {name}")
    emit(
        args,
        data,
        ["key (for set)", "setting", "value", "rule"],
        [[k, what, _shown(k, data[k]), rule] for k, what, rule in _SETTING_ROWS],
    )
    return emit(
        args,
        data["packages"],
        ["package", "price", "seats", "casino credit (rules 6/8)"],
        [
            [p["code"], rands(p["price_cents"]), p["seats"], rands(p["casino_credit_cents"])]
            for p in data["packages"]
        ],
        title="entry packages on sale (rules 5-8; key: packages)",
    )


def create(args: argparse.Namespace) -> int:
    # Default packages: a single seat at the seat price (T5) and T6's example.
    default = (
        Package("single", args.seat_price_cents, 1),
        *(p for p in DEFAULT_PACKAGES if p.seats > 1),
    )
    packages = tuple(_package(t) for t in args.package) or default
    settings = TournamentSettings(
        venue_zone=args.zone,
        seat_price_cents=args.seat_price_cents,
        packages=packages,
        validity=Validity(args.validity),
        direct_final_places=args.direct,
        semi_final_qualifiers=args.semi,
        finalists_from_semis=args.final_quota,
        prize_places=args.prize_places,
        postpone_after=timedelta(minutes=args.postpone_after_min),
        reschedule_notice=timedelta(minutes=args.notice_min),
    )

    async def work(session: AsyncSession) -> tuple[int, str]:
        t = await svc.create_tournament(session, args.name, settings, actor=host_actor())
        return t.id, t.name

    tid, name = run(args, work)
    return _settings_out(args, tid, name, settings)


def list_(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> list[dict[str, Any]]:
        rows = (await session.execute(select(Tournament).order_by(Tournament.id))).scalars()
        return [
            {"id": t.id, "name": t.name, "validity": t.entry_validity, "zone": t.venue_tz}
            for t in rows
        ]

    data = run(args, work)
    return emit(
        args,
        data,
        ["id", "name", "validity", "zone"],
        [[d["id"], d["name"], d["validity"], d["zone"]] for d in data],
    )


def show(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> tuple[int, str, TournamentSettings]:
        t = await find_tournament(session, args.tournament)
        return t.id, t.name, await load_settings(session, t)

    return _settings_out(args, *run(args, work))


def set_(args: argparse.Namespace) -> int:
    changes: dict[str, object] = {}
    for item in args.changes:
        key, sep, raw = item.partition("=")
        if not sep:
            raise OperatorError(f"{item!r}: expected KEY=VALUE")
        try:
            changes[key] = json.loads(raw)
        except json.JSONDecodeError:
            changes[key] = raw  # plain words such as 48h or a zone name

    async def work(session: AsyncSession) -> tuple[int, str, TournamentSettings]:
        merged = await change_settings(
            session, args.tournament, changes, reason=args.reason, actor=host_actor()
        )
        t = await find_tournament(session, args.tournament)
        return t.id, t.name, merged

    return _settings_out(args, *run(args, work))


def decision(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        await svc.record_decision(
            session,
            args.tournament,
            subject=args.about,
            decision=args.decision,
            reason=args.reason,
            actor=host_actor(),
        )
        return {"recorded": True, "about": args.about, "decision": args.decision}

    return emit(args, run(args, work))


def standings(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> Any:
        t = await find_tournament(session, args.tournament)
        as_of = parse_time(args.as_of, t.venue_tz, "--as-of") if args.as_of else None
        if args.limit:  # the live top: SQL window functions, fast at any size
            table = await svc.top_standings(
                session, t.id, Stage(args.stage), limit=args.limit, as_of=as_of
            )
        else:
            table = await svc.stage_standings(session, t.id, Stage(args.stage), as_of=as_of)
        venue_of = await venues_of_entries(
            session, t.id, Stage(args.stage), (x.entry_id for x in table.lines)
        )
        amended = await amended_entries(session, t.id, Stage(args.stage))
        return table, await tournament_prizes.prizes_for(session, table), venue_of, amended  # T15

    if args.limit < 0:
        raise OperatorError("--limit: a number of lines, 0 for all")
    table, prizes, venue_of, amended = run(args, work)
    lines = table.lines
    if args.venue is not None:  # places stay the whole tournament's (T14: one ranking)
        lines = tuple(x for x in lines if venue_of.get(x.entry_id) == args.venue)
    data = {
        "stage": table.stage,
        "cuts": table.cuts,
        "lines": lines,
        "venues": {str(x.entry_id): venue_of.get(x.entry_id) for x in lines},
        "ties_to_draw": table.ties_to_draw,
        "prizes": prizes,
        "goes_on": {str(x.entry_id): table.goes_on(x.entry_id) for x in lines},  # T13, T14a
        "amended": sorted(amended),  # entries changed after the sealed cut
    }
    rows = [
        [
            x.place, "=" if x.tied else "", x.credits, MANUAL_MARK if x.manual else "",
            x.entry_id, x.player_name, x.heat_number, venue_of.get(x.entry_id) or "",
        ]
        for x in lines
    ]  # fmt: skip
    code = emit(
        args,
        data,
        ["place", "tie", "credits", "score", "entry", "player", "heat", "venue"],
        rows,
        title=f"{args.stage} standings (cuts after places {', '.join(map(str, table.cuts))})",
    )
    if not args.json:
        for tie in table.ties_to_draw:
            print(
                f"tie at {tie.credits} credits, place {tie.place}, entries "
                f"{list(tie.entry_ids)}: draw round {tie.next_round} (rule 19)"
            )
        excluded = [x.entry_id for x in lines if table.goes_on(x.entry_id) == "excluded"]
        if excluded:
            print(f"not seated (rule 14, the top qualifier's other entries): {excluded}")
        if amended:
            print(f"amended after the cut was sealed (audit verify lists why): {sorted(amended)}")
        if prizes:
            tournament_prizes.show(args, prizes)
    return code


def qualifiers(args: argparse.Namespace) -> int:
    async def work(
        session: AsyncSession,
    ) -> tuple[Any, dict[tuple[Stage, int], Any], str, dict[Stage, str]]:
        t = await find_tournament(session, args.tournament)
        as_of = parse_time(args.as_of, t.venue_tz, "--as-of") if args.as_of else None
        lines = {}
        words = {}
        for stage in Stage:
            table = await svc.stage_standings(session, t.id, stage, as_of=as_of)
            lines.update({(stage, x.entry_id): x for x in table.lines})
            words[stage] = await _stage_progress(session, t.id, stage)
        return await svc.qualifiers(session, t.id, as_of=as_of), lines, t.venue_tz, words

    q, lines, zone, words = run(args, work)
    data = {
        "qualifying_over": q.qualifying_over,
        "direct_finalists": q.qualifying.direct_finalists,
        "semi_finalists": q.qualifying.semi_finalists,
        "qualifying_ties_to_draw": q.qualifying.pending,
        "semis_over": q.semis_over,
        "finalists": q.finalists,
        "semi_ties_to_draw": q.finalists_from_semis.pending,
        "final_over": q.final_over,
        "winners": q.winners.selected,
        "final_ties_to_draw": q.winners.pending,
    }
    if args.json:
        return emit(args, data)
    rows: list[list[Any]] = []

    def add(stage: Stage, group: str, entries: tuple[int, ...], ties: tuple[Any, ...]) -> None:
        for entry in entries:
            x = lines[(stage, entry)]
            rows.append([group, x.place, x.credits, entry, x.player_name])
        for tie in ties:
            for entry in tie.entry_ids:
                x = lines[(stage, entry)]
                wait = f"tie: draw round {tie.next_round} (rule 19)"
                rows.append([wait, x.place, x.credits, entry, x.player_name])

    add(Stage.QUALIFYING, "final, top single entry (rule 13)", q.qualifying.direct_finalists, ())
    add(Stage.QUALIFYING, "semi-final (rule 14)", q.qualifying.semi_finalists, q.qualifying.pending)
    add(
        Stage.SEMI_FINAL,
        "final, from the semis (rule 17)",
        q.finalists_from_semis.selected,
        q.finalists_from_semis.pending,
    )
    add(Stage.FINAL, "prize place (rule 19)", q.winners.selected, q.winners.pending)
    named = {Stage.QUALIFYING: "qualifying", Stage.SEMI_FINAL: "semi-finals", Stage.FINAL: "final"}
    title = "; ".join(f"{named[stage]} {words[stage]}" for stage in named)
    return emit(args, data, ["group", "place", "credits", "entry", "player"], rows, title, zone)


_PLAYED = (HeatStatus.CLOSED, HeatStatus.CANCELLED)


async def _stage_progress(session: AsyncSession, tournament_id: int, stage: Stage) -> str:
    """What the stage's heats say: "over" only when every one is run or cancelled (as
    :func:`~gateway.tournament.services.standings.stage_over`), "in progress" once one
    has started, else "not started" or "no heats scheduled" (a stage with no heats was
    called "in progress")."""
    statuses = (
        await session.scalars(
            select(Heat.status).where(Heat.tournament_id == tournament_id, Heat.stage == stage)
        )
    ).all()
    if not statuses:
        return "no heats scheduled"
    if all(s in _PLAYED for s in statuses):
        return "over"
    if any(s is not HeatStatus.SCHEDULED for s in statuses):
        return "in progress"
    return f"not started ({len(statuses)} heat{'s' if len(statuses) != 1 else ''} scheduled)"


def _draw_cards(items: list[str]) -> dict[int, DrawnCard]:
    cards: dict[int, DrawnCard] = {}
    for item in items:
        entry_text, sep, rest = item.partition("=")
        if not sep or not entry_text.strip().isdigit():
            raise OperatorError(f"--card {item!r}: expected ENTRY=CARD[:public|nominee:NAME]")
        card_text, _, who = rest.partition(":")
        by, _, name = who.partition(":")
        try:
            drawn_by = DrawnBy(by) if by else DrawnBy.PLAYER
        except ValueError:
            raise OperatorError(f"--card {item!r}: drawer must be public or nominee") from None
        entry = int(entry_text)
        if entry in cards:
            raise OperatorError(f"--card: entry {entry} given twice")
        cards[entry] = DrawnCard(Card.parse(card_text), drawn_by, name or None)
    return cards


def _faces(cards: dict[int, Card]) -> dict[int, str]:
    return {entry: str(card) for entry, card in sorted(cards.items())}


def draw(args: argparse.Namespace) -> int:
    stage = Stage(args.stage)
    if args.seed and not args.digital:
        raise OperatorError("--seed goes with --digital")

    async def work(session: AsyncSession) -> dict[str, Any]:
        t = await find_tournament(session, args.tournament)
        now = now_of(args, t.venue_tz)
        if args.digital:
            seed = parse_seed(args.seed) if args.seed else None
            used, rounds = await svc.digital_draw(
                session, t.id, stage, args.credits, actor=host_actor(), at=now, seed=seed
            )
            drawn = [{"round": r.round, "cards": _faces(r.cards)} for r in rounds]
            return {"seed": used.hex(), "rounds": drawn, **await _after(session, t.id)}
        cards = _draw_cards(args.card)
        tie = await svc.record_physical_draw(
            session, t.id, stage, args.credits, cards, actor=host_actor(), at=now
        )
        drawn = [{"round": tie.next_round, "cards": _faces({e: c.card for e, c in cards.items()})}]
        return {"rounds": drawn, **await _after(session, t.id)}

    async def _after(session: AsyncSession, tid: int) -> dict[str, Any]:
        table = await svc.stage_standings(session, tid, stage)
        still = [t for t in table.ties_to_draw if t.credits == args.credits]
        return {"still_tied": still}

    result = run(args, work)
    if args.json:
        return emit(args, result)
    if "seed" in result:
        print(f"seed {result['seed']} (recorded: anyone can recompute these cards)")
    for r in result["rounds"]:
        cards = ", ".join(f"entry {e}: {c}" for e, c in sorted(r["cards"].items()))
        print(f"round {r['round']}: {cards}")
    for tie in result["still_tied"]:
        print(f"still tied: entries {list(tie.entry_ids)}, draw round {tie.next_round} (rule 19)")
    if not result["still_tied"]:
        print(f"tie at {args.credits} credits broken; see `reelgate tournament standings`")
    return 0


def verify(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> list[str]:
        t = await find_tournament(session, args.tournament)
        cards = await svc.verify_digital_draws(session, t.id)
        return cards + await verify_seat_draws(session, t.id)

    problems = run(args, work)
    emit(args, {"ok": not problems, "problems": problems})
    return 0 if not problems else 1


def seat_draw(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        t = await find_tournament(session, args.tournament)
        draw = await svc.seat_stage(
            session,
            t.id,
            Stage(args.stage),
            actor=host_actor(),
            at=now_of(args, t.venue_tz),
            seed=parse_seed(args.seed) if args.seed else None,
        )
        return {
            "seed": draw.seed.hex(),
            "seats": {
                e: {"heat": s.heat_id, "seat": s.seat_number} for e, s in sorted(draw.seats.items())
            },
        }

    return emit(args, run(args, work))


def expire(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        t = await find_tournament(session, args.tournament)
        expired = await svc.expire_entries(
            session, t.id, now=now_of(args, t.venue_tz), actor=host_actor()
        )
        return {"expired": expired}

    return emit(args, run(args, work))
