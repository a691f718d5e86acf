"""The account subcommands: whoami, name, claim, login, logout, link; and the public
faces of the records: profile and top.

The player key is this machine's (client_cli/identity.py): made at the first command that
needs one, sent as `Authorization: Bearer`, replaced by `login` and `link CODE` (the one
replaced is signed out), signed out and dropped by `logout`. Passwords are read from the
terminal without echo (or a line of standard input when it is not a terminal) and sent
only in a request's body.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import socket
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode

from rich.console import Console
from rich.table import Table

from client_cli.commands import ServerError, _request, foreign_answer
from client_cli.identity import (
    HUMAN,
    Identity,
    bot_kind,
    forget_identity,
    load_identity,
    save_identity,
)
from client_cli.widgets import delta_text, split_clock, splits_text
from core import GAMES

__all__ = ["add_account_parser", "bot_player", "ensure_player", "run_account"]


def _label() -> str:
    return f"solrace on {socket.gethostname()}"[:60]


async def ensure_player(server: str, kind: str = HUMAN) -> Identity:
    """This machine's player on `server`: the kept one if the server still knows its key,
    else a new anonymous player (a bot for any `kind` but HUMAN: `bot_kind`), kept for
    next time."""
    kept = load_identity(server, kind)
    if kept is not None:
        try:
            me = await _request("GET", server, "/me", key=kept.key)
            return save_identity(server, kept.key, _player(server, me), kind)
        except ServerError as error:
            if error.code != "bad_key":
                raise
    made = await _request("POST", server, "/players", {"bot": kind != HUMAN, "label": _label()})
    key = made.get("key")
    if not isinstance(key, str):
        raise foreign_answer(server)
    return save_identity(server, key, _player(server, made), kind)


async def bot_player(server: str, name: str | None) -> Identity:
    """The bot player the solver bot plays as (shown as a bot everywhere, never rated): this
    machine's bot of that name (`bot_kind`), made and named so the first time; without a
    name, the machine's own bot."""
    kind = bot_kind(server, name)
    me = await ensure_player(server, kind)
    if name is not None and name != me.get("name"):
        answer = await _request("POST", server, "/me/name", {"name": name}, key=me.key)
        me = save_identity(server, me.key, _player(server, answer), kind)
    return me


def _player(server: str, answer: dict[str, Any]) -> dict[str, Any]:
    """The PLAYER object of an answer; ServerError when it has none (not solrace's)."""
    player = answer.get("player")
    if not isinstance(player, dict):
        raise foreign_answer(server)
    return player


def _password(prompt: str) -> str:
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    return sys.stdin.readline().rstrip("\n")


def _describe(player: dict[str, Any]) -> str:
    state = "claimed" if player.get("claimed") else "not claimed yet (solrace claim)"
    bot = ", a bot" if player.get("bot") else ""
    return f"{player.get('name')} (id {player.get('id')}{bot}; {state})"


def add_account_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    common: Callable[[argparse.ArgumentParser], None],
) -> None:
    parsers = [
        sub.add_parser(
            "whoami",
            help="who this machine plays as",
            description="Show this machine's player on the server (made now if there is none).",
        )
    ]
    name = sub.add_parser(
        "name",
        help="choose your display name",
        description="Choose the name other players see: 2 to 20 letters (A-Z), digits, _ "
        "and -, unique whatever the case. Your earlier names stay in your profile's history.",
    )
    name.add_argument("name", help="the new name")
    claim = sub.add_parser(
        "claim",
        help="give your account a password, to sign in elsewhere",
        description="Give this account a password (8 characters or more), so that you can "
        "sign in as yourself on another machine (solrace login NAME). Asked for twice.",
    )
    login = sub.add_parser(
        "login",
        help="sign this machine in as a claimed account",
        description="Sign in as NAME with its password: this machine then plays as that "
        "player (its ratings and history). The player this machine was is kept on the "
        "server, its key here signed out; sign back in to it if it was claimed.",
    )
    login.add_argument("name", help="the account's name")
    logout = sub.add_parser(
        "logout",
        help="sign this machine out",
        description="This machine's key signs nobody in any more; the next game makes a "
        "new anonymous player. Your other machines stay signed in.",
    )
    link = sub.add_parser(
        "link",
        help="sign another machine in without a password",
        description="Without CODE: print a one-time code (10 minutes) for another machine. "
        "With CODE: sign this machine in as the player who made it.",
    )
    link.add_argument("code", nargs="?", help="the code another machine printed")
    profile = sub.add_parser(
        "profile",
        help="a player's ratings and latest races",
        description="A player's ratings per game, races played and won, best times and "
        "latest races, each with its id (solrace replay ID shows it move by move). Without "
        "NAME: yours.",
    )
    profile.add_argument("name", nargs="?", help="the player's name (default: yours)")
    profile.add_argument("--page", type=int, default=1, help="page of the latest races")
    top = sub.add_parser(
        "top",
        help="a game's leaderboard",
        description="The best players of a game by rating (settled and recently active), "
        "or with --seed N the fastest winning times on that deal.",
    )
    top.add_argument("game", type=str.lower, choices=GAMES, help="the game (any case)")
    top.add_argument("--seed", type=int, help="best winning times on this deal, not ratings")
    top.add_argument("--period", choices=("day", "week", "all"), default="all", help="default: all")
    top.add_argument("--around-me", action="store_true", help="the rows around your place")
    for parser in (*parsers, name, claim, login, logout, link, profile, top):
        common(parser)


def run_account(args: argparse.Namespace) -> int:
    # Passwords are asked before the event loop runs: inside it, Ctrl+C only asks the loop
    # to stop, and the prompt went on waiting for a line.
    if args.command == "login":
        args.password = _password(f"password of {args.name}: ")
    elif args.command == "claim":
        args.password = _password("new password: ")
        if sys.stdin.isatty() and _password("again: ") != args.password:
            print("solrace claim: the two passwords differ", file=sys.stderr)
            return 1
    try:
        return asyncio.run(_run(args))
    except ServerError as error:
        print(f"solrace {args.command}: {error}", file=sys.stderr)
        return 1


async def _replace_key(server: str, answer: dict[str, Any]) -> None:
    """Keep the key a sign-in or link gave, and sign out the one kept before: forgotten
    here, it would still act for its player with nobody holding it."""
    before = load_identity(server)
    save_identity(server, answer["key"], answer["player"])
    if before is not None and before.key != answer["key"]:
        # Signed out already, or unreachable now: it shows in the player's devices.
        with contextlib.suppress(ServerError):
            await _request("POST", server, "/sign-out", key=before.key)


async def _run(args: argparse.Namespace) -> int:
    server = args.server
    command = args.command
    if command == "profile":
        return await _profile(args)
    if command == "top":
        return await _top(args)
    if command == "logout":
        kept = load_identity(server)
        if kept is None:
            print("this machine is not signed in")
            return 0
        try:
            await _request("POST", server, "/sign-out", key=kept.key)
        except ServerError as error:
            if error.code != "bad_key":
                raise
        forget_identity(server)
        print("signed out: the next game makes a new anonymous player")
        return 0
    if command == "login":
        body = {"name": args.name, "password": args.password, "label": _label()}
        answer = await _request("POST", server, "/sign-in", body)
        await _replace_key(server, answer)
        print(f"signed in as {_describe(answer['player'])}")
        return 0
    if command == "link" and args.code:
        answer = await _request("POST", server, "/link", {"code": args.code, "label": _label()})
        await _replace_key(server, answer)
        print(f"signed in as {_describe(answer['player'])}")
        return 0
    me = await ensure_player(server)
    if command == "whoami":
        print(_describe((await _request("GET", server, "/me", key=me.key))["player"]))
        return 0
    if command == "name":
        answer = await _request("POST", server, "/me/name", {"name": args.name}, key=me.key)
        save_identity(server, me.key, answer["player"])
        print(f"you are {answer['player']['name']} now")
        return 0
    if command == "claim":
        body = {"password": args.password}
        try:
            answer = await _request("POST", server, "/me/claim", body, key=me.key)
        except ServerError as error:
            if error.code == "bad_name":  # the server's words name the HTTP request
                raise ServerError(
                    "choose a name before claiming the account: solrace name NAME", error.code
                ) from None
            raise
        print(f"claimed: sign in elsewhere with solrace login {answer['player']['name']}")
        return 0
    if command == "link":
        answer = await _request("POST", server, "/me/link", key=me.key)
        minutes = max(1, round((answer["expires_at"] - time.time()) / 60))
        print(f"on the other machine, within {minutes} minutes: solrace link {answer['code']}")
        return 0
    raise SystemExit(f"unknown command {command!r}")


def _rating_text(entry: dict[str, Any]) -> str:
    mark = "?" if entry.get("provisional") else ""
    return f"{entry.get('rating')}{mark}"


def _spark(points: list[int]) -> str:
    """A rating history as a line of block characters (low to high)."""
    if not points:
        return ""
    bars = "▁▂▃▄▅▆▇█"
    low, high = min(points), max(points)
    span = (high - low) or 1
    return "".join(bars[(p - low) * (len(bars) - 1) // span] for p in points[-30:])


async def _profile(args: argparse.Namespace) -> int:
    # Asked as this machine's player (when it has one): the deal of a daily attempt is
    # shown to a player whose own attempt at it is over, as the profile page asks.
    me = await ensure_player(args.server) if args.name is None else load_identity(args.server)
    name = me["name"] if args.name is None and me is not None else args.name
    query = urlencode({"page": args.page})
    path = f"/players/{quote(str(name), safe='')}?{query}"
    data = await _request("GET", args.server, path, key=None if me is None else me.key)
    console = Console()
    player = data["player"]
    console.print(f"[b]{player['name']}[/b]" + (" (bot)" if player.get("bot") else ""))
    past = [n["name"] for n in player.get("names", [])]
    if past:
        console.print(f"formerly {', '.join(past)}")
    stats = data.get("stats", {})
    console.print(f"races {stats.get('races', 0)}, won {stats.get('won', 0)}")
    ratings = Table(title="ratings")
    for column in ("game", "rating", "races", "history"):
        ratings.add_column(column)
    for entry in data.get("ratings", []):
        history = [int(h["rating"]) for h in entry.get("history", [])]
        ratings.add_row(
            entry["game"], _rating_text(entry), str(entry.get("races", "")), _spark(history)
        )
    if data.get("ratings"):
        console.print(ratings)
    else:  # as the profile page says it
        console.print("Bots are not rated." if player.get("bot") else "No rated races yet.")
    best = data.get("best", [])
    if best:
        table = Table(title="best times")
        for column in ("game", "time", "deal"):
            table.add_column(column)
        for entry in best:
            seed = entry.get("seed")
            deal = "not public yet" if seed is None else str(seed)
            table.add_row(entry["game"], f"{entry['time']:.2f} s", deal)
        console.print(table)
    splits = data.get("splits", [])
    if splits:
        table = Table(title="splits")
        for column in ("game", "best splits", "best segments", "sum of best"):
            table.add_column(column)
        for entry in splits:
            best_run = splits_text(_seconds(entry["best"])) if entry.get("best") else "no win yet"
            total = entry.get("sum_of_best")
            table.add_row(
                entry["game"],
                best_run,
                splits_text(_seconds(entry["best_segments"])),
                split_clock(None if total is None else total / 1000),
            )
        console.print(table)
    races = data.get("races", {})
    table = Table(title=f"latest races (page {races.get('page', args.page)})")
    # The race's id, not its replay's address: the id fits any terminal, and it is what
    # `solrace replay` and the browser's /replay/ take.
    for column in ("ended", "game", "place", "time", "rating", "splits (delta)", "race"):
        table.add_column(column, no_wrap=column == "race")
    for race in races.get("items", []):
        ended = time.strftime("%Y-%m-%d %H:%M", time.localtime(race["ended_at"]))
        place = f"{race['place']}/{race['seats']}"
        took = f"{race['time']:.2f} s" if race.get("time") is not None else "-"
        table.add_row(
            ended,
            race["game"],
            place,
            took,
            _rating_cell(race),
            _race_splits(race),
            _race_cell(race),
        )
    if races.get("items"):
        console.print(table)
    else:
        console.print("No races yet." if races.get("page", 1) == 1 else "No races on this page.")
    if races.get("items"):
        console.print(
            f"a race move by move: solrace replay RACE, or {args.server}/replay/RACE in a browser"
        )
    if races.get("more"):
        console.print(f"more: solrace profile {player['name']} --page {races['page'] + 1}")
    return 0


# What a race was, beside its game, when it moved no rating for a reason of its kind (as
# the profile page says it): a daily attempt is ranked on its day's board instead, a ghost
# race is never rated; any other unrated race is casual (its creator chose so).
RACE_KINDS = {"daily": "daily deal", "ghost": "ghost race"}


def _race_cell(race: dict[str, Any]) -> str:
    """The race's id, and under it (not beside the game: an 80-column table has no room
    there for "stalactites") what kind of race it was."""
    tag = RACE_KINDS.get(race.get("kind", "")) or ("" if race.get("rated") else "casual")
    return f"{race['race']}\n{tag}" if tag else str(race["race"])


def _rating_cell(race: dict[str, Any]) -> str:
    """The rating before and after a rated race (the change is what the race did), on two
    lines: the column stays as narrow as the new rating alone."""
    before, after = race.get("rating_before"), race.get("rating_after")
    if after is None:
        return "-"
    return str(after) if before is None else f"{before} →\n{after}"


def _seconds(values: list[int | None]) -> list[float | None]:
    return [None if v is None else v / 1000 for v in values]


def _race_splits(race: dict[str, Any]) -> str:
    """A race's splits, each with its delta to the best (in ms), said as the race view says
    one: `0:41.2 (-3.2 s)`."""
    if not race.get("splits"):
        return "-"
    cells = []
    for value, delta in zip(race["splits"], race.get("delta") or [None] * 4, strict=False):
        cell = split_clock(None if value is None else value / 1000)
        if delta is not None:
            cell += f" ({delta_text(delta / 1000, 0.0)})"
        cells.append(cell)
    return " ".join(cells)


async def _top(args: argparse.Namespace) -> int:
    by_time = args.seed is not None
    query: dict[str, Any] = {"by": "time" if by_time else "rating", "period": args.period}
    if by_time:
        query["seed"] = args.seed
    if args.around_me:
        query["around"] = (await ensure_player(args.server))["id"]
    data = await _request("GET", args.server, f"/leaderboard/{args.game}?{urlencode(query)}")
    what = f"best times on deal {args.seed}" if by_time else "ratings"
    table = Table(title=f"{args.game}: {what} ({args.period})", min_width=50)
    for column in ("#", "player", "time" if by_time else "rating"):
        table.add_column(column)
    for row in data.get("rows", []):
        player = row.get("player", {})
        name = str(player.get("name")) + (" (bot)" if player.get("bot") else "")
        shown = f"{row['time_ms'] / 1000:.2f} s" if by_time else str(row.get("rating"))
        table.add_row(str(row.get("rank")), name, shown)
    console = Console()
    console.print(table)
    if not data.get("rows") and by_time:
        console.print("nobody has won this deal in that period yet")
    elif not data.get("rows"):
        console.print(
            "nobody yet: ratings show once settled (about ten rated races) and while played"
        )
    return 0
