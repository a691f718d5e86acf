"""`solrace daily [GAME]`: the daily deals (docs/protocol.md section 13).

Without GAME: today's deal of each game, your attempts, the leaders, your streaks and the
day's commitment (yesterday's key to check yesterday's deals). With GAME: its board
(`--board`, `--date` for a past day), or your ranked attempt at today's deal, said first
(undo makes it unranked; the clock starts at once and does not stop), then raced on the
race screen; run it again to come back to a running attempt; `--practice` once it is over.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from client_cli.cards import CardStyle
from client_cli.commands import ServerError, _request
from client_cli.widgets import BOT_TAG, clock_ms, counted
from core import GAMES

__all__ = [
    "add_daily_parser",
    "board_table",
    "check_daily",
    "run_daily",
    "start_attempt",
    "streaks_text",
    "today_table",
]

RULE = (
    "Your first attempt at today's {game} is ranked: by won, then time, then moves. Undo "
    "makes it unranked (hints are off). The clock is the server's: it starts now and does "
    "not stop, even if you quit; run `solrace daily {game}` again to come back to it."
)


def add_daily_parser(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    daily = sub.add_parser(
        "daily",
        help="today's deals: a ranked attempt each, the boards, your streaks",
        description="Without GAME: today's deal of each game, your attempts, the leaders and "
        "your streaks. With GAME: your ranked attempt at today's deal (said first, then "
        "raced; run it again to come back to it), or its board with --board.",
    )
    daily.add_argument("game", nargs="?", type=str.lower, choices=GAMES, help="the game")
    daily.add_argument("--board", action="store_true", help="show GAME's board, not race")
    daily.add_argument("--date", metavar="YYYY-MM-DD", help="with --board: a past day's")
    daily.add_argument(
        "--practice", action="store_true", help="race the deal again, unranked (after yours)"
    )
    daily.add_argument("--yes", action="store_true", help="start without asking")
    common(daily)


def check_daily(daily: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The options of `solrace daily` that argparse cannot check one by one: one that
    would be dropped is refused (daily.error)."""
    if args.game is None:
        given = [f"--{o}" for o in ("board", "date", "practice", "yes") if getattr(args, o)]
        if given:
            daily.error(
                f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} about one game's"
                " deal: give GAME (solrace daily shaula ...)"
            )
    if args.date is not None and not args.board:
        daily.error(
            "--date shows a past day's board: give --board too (an attempt is always at"
            " today's deal)"
        )
    if args.board and (args.practice or args.yes):
        given = [f"--{o}" for o in ("practice", "yes") if getattr(args, o)]
        daily.error(f"--board only shows the board, it starts no race: not {' or '.join(given)}")


async def _me(server: str) -> str:
    from client_cli.account import ensure_player

    return (await ensure_player(server)).key


def today_table(today: dict[str, Any]) -> Table:
    table = Table(title=f"Daily deals · {today['date']} (UTC)")
    for column in ("game", "you", "leader", "ranked"):
        table.add_column(column)
    for entry in today["games"]:
        you = entry.get("you")
        leader = entry.get("leader")
        table.add_row(
            entry["game"],
            _attempt_text(you) if you else "not yet",
            _row_text(leader) if leader else "-",
            str(entry.get("ranked", 0)),
        )
    return table


def _attempt_text(you: dict[str, Any]) -> str:
    if not you["finished"]:
        return "running"
    text = (
        f"won in {clock_ms(you['time'])}"
        if you["won"]
        else f"{counted(you['progress'], 'card')} up"
    )
    return text + ("" if you["ranked"] else " (unranked)")


def _row_text(row: dict[str, Any]) -> str:
    result = f"{clock_ms(row['time'])}" if row["won"] else counted(row["progress"], "card")
    return f"{_name(row)}: {result}, {counted(row['moves'], 'move')}"


def _name(row: dict[str, Any]) -> str:
    return str(row["name"]) + (BOT_TAG if row.get("bot") else "")


def board_table(board: dict[str, Any]) -> Table:
    title = f"{board['game'].capitalize()} · {board['date']}"
    if board.get("seed"):
        title += f" · deal #{board['seed']}"
    table = Table(title=title)
    for column, justify in (("#", "right"), ("player", "left"), ("result", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.add_column("moves", justify="right")
    table.add_column("replay")
    for row in board["board"]:
        table.add_row(
            str(row["place"]),
            _name(row),
            clock_ms(row["time"]) if row["won"] else counted(row["progress"], "card"),
            str(row["moves"]),
            row["room"] or "",
        )
    return table


def board_counts(board: dict[str, Any]) -> str:
    """Under the board, as the daily page's caption says it: the ranked, those racing
    now and the unranked (undo); for an empty board, why it is empty."""
    text = f"{len(board['board'])} ranked"
    if board.get("running"):
        text += f", {board['running']} racing now"
    if board.get("unranked"):
        text += f", {board['unranked']} unranked"
    if not board["board"]:  # the day's key is published once the day is over
        text += " · " + (
            "Nobody was ranked that day." if board.get("key") else "No attempt is over yet."
        )
    return text


async def start_attempt(server: str, game: str, practice: bool) -> dict[str, Any]:
    """POST /daily/GAME as this machine's player: the room, its seat and token."""
    key = await _me(server)
    answer: dict[str, Any] = await _request(
        "POST", server, f"/daily/{game}", {"practice": practice}, key=key
    )
    answer["key"] = key
    return answer


def streaks_text(streaks: dict[str, int]) -> str:
    """The player's streaks in words, as the daily page says them (web/daily.js)."""
    played, won = streaks["played"], streaks["won"]
    if not played:
        return "No streak running: an attempt today starts one."
    won_text = f"{counted(won, 'day')} in a row won" if won else "no day won in a row yet"
    return f"Your streaks: {counted(played, 'day')} in a row played; {won_text}."


def run_daily(args: argparse.Namespace, style: CardStyle) -> int:
    console = Console(no_color=not style.color)
    try:
        if args.game is None:
            today = asyncio.run(_daily(args.server))
            console.print(today_table(today))
            if "streaks" in today:
                console.print(streaks_text(today["streaks"]))
            console.print(
                f"commitment {today['commitment']} · yesterday's key {today['yesterday']['key']}"
            )
            return 0
        if args.board:
            date = args.date or asyncio.run(_daily(args.server))["date"]
            board = asyncio.run(_board(args.server, date, args.game))
            console.print(board_table(board))
            console.print(board_counts(board))
            return 0
        today = asyncio.run(_daily(args.server))
        mine = next(g for g in today["games"] if g["game"] == args.game).get("you")
        if mine is None and not args.practice and not args.yes:
            console.print(RULE.format(game=args.game))
            if not sys.stdin.isatty() or input("Start now? [y/N] ").strip().lower() != "y":
                console.print("not started")
                return 0
        answer = asyncio.run(start_attempt(args.server, args.game, args.practice))
    except ServerError as error:
        if error.code == "daily_taken":  # the server's words name the HTTP request
            error = ServerError(
                f"your ranked attempt at today's {args.game} is over: solrace daily "
                f"{args.game} --practice races the deal again (unranked), --board shows "
                "the day's board",
                error.code,
            )
        print(f"solrace daily: {error}", file=sys.stderr)
        return 1
    from client_cli.race_app import RaceApp
    from client_cli.seat import Seat

    room = answer["room"]["id"]
    seat = Seat(args.server, room, "", token=answer["token"], key=answer["key"])
    app = RaceApp(seat, style)
    app.run()
    return 0 if app.return_code in (None, 0) else 1


async def _daily(server: str) -> dict[str, Any]:
    answer: dict[str, Any] = await _request("GET", server, "/daily", key=await _me(server))
    return answer


async def _board(server: str, date: str, game: str) -> dict[str, Any]:
    path = f"/daily/{date}/{game}"
    answer: dict[str, Any] = await _request("GET", server, path, key=await _me(server))
    return answer
