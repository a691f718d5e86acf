"""`solrace tournament create | join | watch | standings | start | pause | resume | remove`.

The organiser creates a tournament (its secret organiser token is kept on this machine,
beside the seats: $XDG_STATE_HOME/solrace/tournaments.json); players join with a name and
keep their player token the same way, so running `join` again takes their place back.
A player (or the bot, `--bot`) then follows the tournament over one reconnecting
WebSocket (`tour_watch`): whenever their line names a room, they race there (the race
screen shows the standings beside the board), and between races the standings are shown.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from rich.console import Console
from rich.live import Live
from rich.table import Table

import core
from client_cli.cards import CardStyle
from client_cli.commands import ServerError, _request
from client_cli.memory import state_file
from client_cli.net import Link, ws_url
from client_cli.options import seconds
from client_cli.state_files import one_writer, write_whole
from protocol import FORMATS, Message, TourState, TourView, TourWatch

__all__ = [
    "Follow",
    "add_tournament_parser",
    "recall_token",
    "remember_token",
    "run_tournament",
    "standings_table",
    "standings_text",
    "tournament_body",
]


# ---------------------------------------------------------------- tokens kept on disk


def _tokens_file() -> Any:
    return state_file().with_name("tournaments.json")


def _tokens() -> dict[str, str]:
    try:
        data = json.loads(_tokens_file().read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def _key(server: str, tid: str, who: str) -> str:
    return f"{server.rstrip('/')} {tid} {who}"


def remember_token(server: str, tid: str, who: str, token: str) -> None:
    """Keep a token: `who` is "organiser" or "player NAME"."""
    path = _tokens_file()
    with one_writer(path):
        tokens = _tokens()
        tokens[_key(server, tid, who)] = token
        write_whole(path, json.dumps(tokens, indent=1))


def recall_token(server: str, tid: str, who: str) -> str | None:
    return _tokens().get(_key(server, tid, who))


# ---------------------------------------------------------------- the command line


def add_tournament_parser(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    tour = sub.add_parser(
        "tournament",
        help="create, join, watch a tournament; its standings",
        description="Tournaments: an organiser creates one (and starts it), players join "
        "with a name and race every round they are given; anyone watches the standings. "
        "docs/tournaments.md explains the formats and scoring.",
    )
    common(tour)
    actions = tour.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="create a tournament (you are its organiser)")
    create.add_argument("name", help="the tournament's name, as its players see it")
    create.add_argument(
        "--format",
        choices=FORMATS,
        default="rounds",
        help="rounds (the default), arena or knockout: docs/tournaments.md",
    )
    create.add_argument(
        "--game",
        action="append",
        type=str.lower,
        choices=core.GAMES,
        help="a game (default shaula); repeat for a rotation",
    )
    create.add_argument("--rounds", type=int, help="Rounds: how many (default 3)")
    create.add_argument("--duration", type=seconds, help="Arena: seconds of pairing (default 600)")
    create.add_argument("--time-limit", type=seconds, help="seconds per race (default 300)")
    create.add_argument(
        "--any-deal",
        action="store_true",
        help="deal any deal (default: only deals the solver proved winnable)",
    )
    create.add_argument("--spectator-delay", type=seconds, help="seconds (default 10)")
    create.add_argument("--max-players", type=int, help="default 64")
    create.add_argument("--pause", type=seconds, help="seconds between rounds (default 30)")
    create.add_argument("--countdown", type=seconds, help="seconds before each race (default 5)")
    create.add_argument("--start", action="store_true", help="start it at once")
    for action, text in (
        ("start", "start it (registration closes)"),
        ("pause", "hold the next round"),
        ("resume", "go on after a pause"),
    ):
        organise = actions.add_parser(action, help=f"organiser: {text}")
        organise.add_argument("tournament")
        organise.add_argument("--token", help="the organiser token (default: the one kept here)")
    remove = actions.add_parser("remove", help="organiser: remove a player")
    remove.add_argument("tournament")
    remove.add_argument("player", help="the player's name")
    remove.add_argument("--token", help="the organiser token (default: the one kept here)")
    join = actions.add_parser(
        "join", help="register and race every round you are given (again: take your place back)"
    )
    join.add_argument("tournament")
    join.add_argument(
        "--name",
        help="register anonymously under this name (default: as this machine's player, "
        "solrace whoami)",
    )
    join.add_argument(
        "--bot",
        action="store_true",
        help="let the solver bot race: this machine's bot player (as solrace bot plays; of "
        "--name's name), shown as a bot, never rated",
    )
    join.add_argument("--pace", type=seconds, default=0.5, help="the bot's seconds between moves")
    leaving = []
    for action, text in (
        ("withdraw", "leave the next rounds (your score stays; return later)"),
        ("return", "come back after a withdrawal"),
    ):
        player = actions.add_parser(action, help=text)
        player.add_argument("tournament")
        player.add_argument(
            "--name",
            help="the name you joined with (default: as this machine's player, solrace whoami)",
        )
        player.add_argument(
            "--bot",
            action="store_true",
            help="this machine's bot's registration (join --bot; with --name, the bot of "
            "that name)",
        )
        leaving.append(player)
    watch = actions.add_parser("watch", help="the standings, live")
    watch.add_argument("tournament")
    watch.add_argument("--top", type=int, default=20, help="rows shown (default 20)")
    standings = actions.add_parser("standings", help="print the standings")
    standings.add_argument("tournament")
    standings.add_argument(
        "--format", dest="output", choices=("table", "json", "csv", "ndjson"), default="table"
    )
    for parser in (create, remove, join, watch, standings, *leaving, *_organise_parsers(actions)):
        common(parser)


def _organise_parsers(actions: Any) -> list[argparse.ArgumentParser]:
    return [actions.choices[name] for name in ("start", "pause", "resume")]


def tournament_body(args: argparse.Namespace) -> dict[str, Any]:
    """POST /tournaments's body: only what was given, so the server's defaults apply."""
    body: dict[str, Any] = {"name": args.name, "format": args.format}
    if args.game:
        body["games"] = list(args.game)
    for option in (
        "rounds",
        "duration",
        "time_limit",
        "spectator_delay",
        "max_players",
        "pause",
        "countdown",
    ):
        value = getattr(args, option)
        if value is not None:
            body[option] = value
    if args.any_deal:
        body["winnable"] = False
    return body


def run_tournament(args: argparse.Namespace, style: CardStyle) -> int:
    console = Console(no_color=not style.color)
    try:
        if args.action == "create":
            return asyncio.run(_create(args, console))
        if args.action in ("start", "pause", "resume", "remove"):
            return asyncio.run(_organise(args, console))
        if args.action == "standings":
            return asyncio.run(_standings(args, console))
        if args.action == "watch":
            return asyncio.run(_watch(args, console))
        if args.action == "join":
            return asyncio.run(_join(args, style, console))
        if args.action in ("withdraw", "return"):
            return asyncio.run(_as_player(args, console))
    except ServerError as error:
        print(f"solrace tournament {args.action}: {error}", file=sys.stderr)
        return 1
    raise SystemExit(f"unknown action {args.action!r}")


def _path(tid: str, tail: str = "") -> str:
    return f"/tournaments/{quote(tid, safe='')}{tail}"


async def _create(args: argparse.Namespace, console: Console) -> int:
    data = await _request("POST", args.server, "/tournaments", tournament_body(args))
    tid, token = data["tournament"]["id"], data["organiser_token"]
    remember_token(args.server, tid, "organiser", token)
    console.print(f"tournament [b]{tid}[/b] created: {data['tournament']['name']}")
    console.print(f"organiser token (kept on this machine): {token}")
    console.print(f"players join with: solrace tournament join {tid} --name NAME")
    if args.start:
        await _request("POST", args.server, _path(tid, "/start"), {"organiser_token": token})
        console.print("started")
    return 0


async def _organise(args: argparse.Namespace, console: Console) -> int:
    token = args.token or recall_token(args.server, args.tournament, "organiser")
    if token is None:
        raise ServerError("no organiser token kept here for it: give --token")
    body: dict[str, Any] = {"organiser_token": token}
    if args.action == "remove":
        body["player"] = args.player
    data = await _request("POST", args.server, _path(args.tournament, f"/{args.action}"), body)
    status = data["tournament"]["status"]
    said = {"registration": "open for registration", "finished": "over"}.get(status, status)
    paused = " (paused)" if data["tournament"]["paused"] else ""
    console.print(f"{args.action}: done; the tournament is {said}{paused}")
    return 0


async def _as_player(args: argparse.Namespace, console: Console) -> int:
    name = args.name
    if args.bot:  # registered as this machine's bot of that name, as `join --bot` does
        from client_cli.identity import bot_kind, load_identity

        bot = load_identity(args.server, bot_kind(args.server, name))
        if bot is None:
            which = f"bot {name}" if name else "bot"
            raise ServerError(f"this machine has no {which} on {args.server}")
        name = str(bot.get("name"))
    elif name is None:  # registered as this machine's player, as `join` does without --name
        from client_cli.account import ensure_player

        name = str((await ensure_player(args.server))["name"])
    token = recall_token(args.server, args.tournament, f"player {name}")
    if token is None:
        raise ServerError(f"this machine did not join {args.tournament} as {name!r}")
    data = await _request(
        "POST", args.server, _path(args.tournament, f"/{args.action}"), {"token": token}
    )
    console.print(f"{name} is now {data['player']['status']} in {args.tournament}")
    return 0


async def _standings(args: argparse.Namespace, console: Console) -> int:
    if args.output in ("csv", "ndjson"):
        import aiohttp

        from client_cli.commands import HTTP_TIMEOUT
        from client_cli.net import http_url

        url = http_url(args.server, _path(args.tournament, f"/standings?format={args.output}"))
        try:
            async with aiohttp.ClientSession(timeout=HTTP_TIMEOUT) as http, http.get(url) as r:
                text = await r.text()
                if r.status >= 400:
                    raise ServerError(f"the server said no ({r.status}): {text}")
        except aiohttp.ClientError as error:
            raise ServerError(f"cannot reach {url}: {error}") from error
        sys.stdout.write(text)
        return 0
    data = await _request("GET", args.server, _path(args.tournament, "/standings"))
    if args.output == "json":
        print(json.dumps(data, indent=1))
        return 0
    console.print(standings_table(data["tournament"], data["standings"]))
    deals = data["tournament"].get("deals") or []
    if deals:
        console.print(
            "deals: " + ", ".join(f"round {d['round']} {d['game']} #{d['seed']}" for d in deals)
        )
    return 0


# ---------------------------------------------------------------- following live


class Follow:
    """The tournament as the server last said (`tour_watch`), over a reconnecting link;
    older versions than one already seen are dropped."""

    def __init__(self, server: str, tid: str, token: str | None = None, top: int = 20) -> None:
        self.tid = tid
        self.token = token
        self.top = top
        self.state: TourState | None = None
        self.changed = asyncio.Event()
        self.error: str | None = None
        self.link = Link(ws_url(server), self.hello, self.receive)

    def hello(self) -> Message:
        return TourWatch(tournament=self.tid, token=self.token, top=self.top)

    def receive(self, msg: Message) -> None:
        if isinstance(msg, TourState):
            if self.state is None or msg.version >= self.state.version:
                self.state = msg
                self.changed.set()
        elif getattr(msg, "TYPE", "") == "error":
            self.error = f"{getattr(msg, 'message', '')} ({getattr(msg, 'code', '')})"
            self.changed.set()

    async def next(self) -> TourState:
        """Wait for a change; ServerError if the server refused to follow."""
        await self.changed.wait()
        self.changed.clear()
        if self.error:
            raise ServerError(self.error)
        assert self.state is not None
        return self.state

    @property
    def finished(self) -> bool:
        return self.state is not None and self.state.tournament.get("status") == "finished"

    @property
    def room(self) -> str | None:
        you = self.state.you if self.state is not None else None
        room = you.get("room") if you else None
        return room if isinstance(room, str) else None


def standings_table(
    tour: TourView, rows: Sequence[Mapping[str, object]], you: str | None = None
) -> Table:
    """The standings with the format's columns."""
    fmt = tour.get("format", "rounds")
    status = tour.get("status", "?")
    round_ = tour.get("round", 0)
    title = f"{tour.get('name', '?')} · {fmt} · {status}"
    if status == "running":
        title += f" · {'wave' if fmt == 'arena' else 'round'} {round_}"
    if tour.get("paused"):
        title += " · paused"
    table = Table(title=title, expand=False)
    columns = {
        "rounds": [("points", "points"), ("wins", "wins"), ("rounds", "raced")],
        "arena": [("score", "score"), ("wins", "wins"), ("heats", "heats"), ("streak", "streak")],
        "knockout": [("wins", "wins"), ("out_round", "out in")],
    }.get(fmt, [])
    table.add_column("#", justify="right")
    table.add_column("player")
    table.add_column("rating", justify="right")
    for _, label in columns:
        table.add_column(label, justify="right")
    for row in rows:
        name = str(row.get("name", "?"))
        if row.get("bot"):
            name += " (bot)"
        if row.get("status") != "active":
            name += f" ({row.get('status')})"
        if you is not None and row.get("name") == you:
            name = f"[b]{name} (you)[/b]"
        cells = []
        for key, _ in columns:
            value = row.get(key)
            cells.append(
                "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
            )
        rating = row.get("rating")
        table.add_row(str(row.get("rank", "")), name, "" if rating is None else str(rating), *cells)
    if tour.get("champion"):
        table.caption = f"champion: {tour['champion']}"
    return table


def standings_text(
    tour: TourView, rows: Sequence[Mapping[str, object]], you: str | None = None
) -> str:
    """A narrow form of the standings for beside the race: rank, name, score."""
    fmt = tour.get("format", "rounds")
    key = {"rounds": "points", "arena": "score", "knockout": "wins"}.get(fmt, "points")
    unit = {"rounds": "pts", "arena": "pts", "knockout": "won"}.get(fmt, "")
    where = "wave" if fmt == "arena" else "round"
    lines = [
        str(tour.get("name", "?")),
        f"{fmt} · {tour.get('status')} · {where} {tour.get('round')}",
        "",
    ]
    for row in rows:
        name = str(row.get("name", "?"))[:18]
        mark = " (you)" if you is not None and row.get("name") == you else ""
        value = row.get(key, 0)
        score = f"{value:g}" if isinstance(value, float) else str(value)
        gone = "" if row.get("status") == "active" else " ·" + str(row.get("status"))[:1]
        lines.append(f"{row.get('rank', ''):>3}. {name}{mark}{gone}  {score} {unit}")
    if tour.get("champion"):
        lines += ["", f"champion: {tour['champion']}"]
    return "\n".join(lines)


async def _watch(args: argparse.Namespace, console: Console) -> int:
    follow = Follow(args.server, args.tournament, top=args.top)
    follow.link.start()
    try:
        state = await asyncio.wait_for(follow.next(), 15)
        with Live(standings_table(state.tournament, state.standings), console=console) as live:
            while not follow.finished:
                state = await follow.next()
                live.update(standings_table(state.tournament, state.standings))
    except TimeoutError:
        raise ServerError(f"no answer about tournament {args.tournament}") from None
    finally:
        await follow.link.close()
    return 0


async def _join(args: argparse.Namespace, style: CardStyle, console: Console) -> int:
    key = None
    if args.bot:  # a bot player of this machine's, as `solrace bot` plays: shown as one
        from client_cli.account import bot_player

        me = await bot_player(args.server, args.name)
        key, name = me.key, str(me["name"])
    elif args.name is None:  # as this machine's player: the registration is theirs
        from client_cli.account import ensure_player

        me = await ensure_player(args.server)
        key, name = me.key, str(me["name"])
    else:
        name = args.name
    token = recall_token(args.server, args.tournament, f"player {name}")
    if token is None:
        data = await _request(
            "POST", args.server, _path(args.tournament, "/players"), {"name": name}, key=key
        )
        token = str(data["token"])
        remember_token(args.server, args.tournament, f"player {name}", token)
        console.print(f"registered in {args.tournament} as {data['player']['name']}")
    else:
        console.print(f"taking back your place in {args.tournament} as {name}")
    follow = Follow(args.server, args.tournament, token=token)
    follow.link.start()
    raced: set[str] = set()
    shown = -1
    try:
        while True:
            state = await asyncio.wait_for(follow.next(), 3600)
            room = follow.room
            if room is not None and room not in raced:
                raced.add(room)
                await _race(args, style, room, token, name, follow)
                continue
            if follow.finished:
                console.print(standings_table(state.tournament, state.standings, name))
                return 0
            if state.tournament.get("round", 0) != shown and not state.tournament.get("racing"):
                shown = state.tournament.get("round", 0)
                console.print(standings_table(state.tournament, state.standings, name))
                console.print("waiting for the next race…")
    finally:
        await follow.link.close()


async def _race(
    args: argparse.Namespace, style: CardStyle, room: str, token: str, name: str, follow: Follow
) -> None:
    from client_cli.seat import Seat

    if args.bot:
        from client_cli.bot import play_race

        def say(line: str) -> None:
            print(f"{name}: {line}", flush=True)

        try:
            await play_race(Seat(args.server, room, name, token=token), args.pace, say)
        except ConnectionError as error:
            say(f"could not race in {room}: {error}")
        return
    from client_cli.tournament_app import TourRaceApp

    await TourRaceApp(Seat(args.server, room, name, token=token), follow, style).run_async()
