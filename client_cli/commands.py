"""The network subcommands: play, watch, rooms and bot.

Rooms are created and listed over the server's HTTP API; everything else goes
over the WebSocket (see `seat` and `net`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any
from urllib.parse import quote

import aiohttp
from rich.console import Console
from rich.table import Table

from client_cli.cards import CardStyle
from client_cli.memory import recall_token, remember_token
from client_cli.net import http_url

__all__ = [
    "ServerError",
    "create_room",
    "get_room",
    "list_rooms",
    "rooms_table",
    "run",
    "seat_token",
]

HTTP_TIMEOUT = aiohttp.ClientTimeout(total=10)


class ServerError(Exception):
    """The server could not be reached or refused the request; the message says why."""


async def _request(method: str, url: str, body: dict[str, Any] | None = None) -> Any:
    try:
        async with (
            aiohttp.ClientSession(timeout=HTTP_TIMEOUT) as http,
            http.request(method, url, json=body) as response,
        ):
            data = await response.json(content_type=None)
            if response.status >= 400:
                error = data.get("error") if isinstance(data, dict) else None
                detail = error.get("message", error) if isinstance(error, dict) else data
                raise ServerError(f"the server said no ({response.status}): {detail}")
            return data
    except (aiohttp.ClientError, TimeoutError) as error:
        raise ServerError(f"cannot reach {url}: {error or error.__class__.__name__}") from error


async def create_room(server: str, settings: dict[str, Any]) -> dict[str, Any]:
    """POST /rooms: a new room from `settings` (game, seats, seed, undo, hints)."""
    data = await _request("POST", http_url(server, "/rooms"), settings)
    room = data.get("room", data) if isinstance(data, dict) else data
    if isinstance(room, str):
        return {"id": room}
    if not isinstance(room, dict) or "id" not in room:
        raise ServerError(f"unexpected answer to POST /rooms: {data!r}")
    return room


async def get_room(server: str, room: str) -> dict[str, Any]:
    """GET /rooms/ID: one room's view (ServerError when there is no such room)."""
    data = await _request("GET", http_url(server, f"/rooms/{quote(room, safe='')}"))
    found = data.get("room") if isinstance(data, dict) else None
    if not isinstance(found, dict):
        raise ServerError(f"unexpected answer to GET /rooms/{room}: {data!r}")
    return found


async def list_rooms(server: str) -> list[dict[str, Any]]:
    """GET /rooms: the room views the server lists."""
    data = await _request("GET", http_url(server, "/rooms"))
    rooms = data.get("rooms", []) if isinstance(data, dict) else data
    return [r for r in rooms if isinstance(r, dict)]


def rooms_table(rooms: list[dict[str, Any]]) -> Table:
    table = Table(title="solrace rooms")
    for column in ("room", "game", "status", "players", "rules"):
        table.add_column(column)
    for room in rooms:
        players = room.get("players") or []
        names = ", ".join(str(p.get("name", "?")) for p in players if isinstance(p, dict))
        seats = room.get("seats")
        count = f"{len(players)}/{seats}" if seats else str(len(players))
        rules = [
            "undo" if room.get("undo", True) else "no undo",
            "hints" if room.get("hints") else "no hints",
        ]
        table.add_row(
            str(room.get("id", "?")),
            str(room.get("game", "?")),
            str(room.get("status", "?")),
            f"{count} {names}".strip(),
            ", ".join(rules),
        )
    return table


def room_settings(args: argparse.Namespace) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "game": args.game,
        "seats": args.seats,
        "undo": not args.no_undo,
        "hints": not args.no_hints,
    }
    if args.seed is not None:
        settings["seed"] = int(args.seed) if args.seed.isdigit() else args.seed
    return settings


def run(args: argparse.Namespace, style: CardStyle) -> int:
    """Run a network subcommand; 0 on success, 1 when the server says no."""
    console = Console(no_color=not style.color)
    try:
        if args.command == "rooms":
            rooms = asyncio.run(list_rooms(args.server))
            if rooms:
                console.print(rooms_table(rooms))
            else:
                console.print("no rooms yet: [b]solrace play[/b] creates one")
            return 0
        if args.command == "bot":
            return asyncio.run(_bot(args))
        if args.command == "play" and args.quick:
            return _quick(args, style)
        if args.command == "play":
            room = args.room or asyncio.run(create_room(args.server, room_settings(args)))["id"]
            return _play(args, str(room), style)
        if args.command == "watch":
            return _watch(args, style)
    except ServerError as error:
        print(f"solrace {args.command}: {error}", file=sys.stderr)
        return 1
    raise SystemExit(f"unknown command {args.command!r}")


def seat_token(view: dict[str, Any], remembered: str | None, name: str) -> str | None:
    """The remembered token to take the seat back with, unless that seat is live.

    In the lobby, a player of that name still connected is another terminal of this
    account (a friend trying `solrace play ROOM`): they get a seat of their own.
    """
    if remembered is not None and view.get("status") == "lobby":
        players = view.get("players") or []
        if any(p.get("name") == name and p.get("connected") for p in players):
            return None
    return remembered


def _play(args: argparse.Namespace, room: str, style: CardStyle) -> int:
    from client_cli.race_app import RaceApp
    from client_cli.seat import Seat

    view = asyncio.run(get_room(args.server, room))
    token = seat_token(view, recall_token(args.server, room, args.name), args.name)
    if view.get("status") != "lobby" and token is None:
        raise ServerError(
            f"the race in room {room} is {view.get('status')}: watch it with `solrace watch {room}`"
        )
    seat = Seat(
        args.server,
        room,
        args.name,
        token=token,
        on_token=lambda new: remember_token(args.server, room, args.name, new),
    )
    app = RaceApp(seat, style)
    app.run()
    return 0 if app.return_code in (None, 0) else 1


def _quick(args: argparse.Namespace, style: CardStyle) -> int:
    """A quick match: queue for the game, race the next player who asks for it."""
    from client_cli.race_app import RaceApp
    from client_cli.seat import Seat

    seat = Seat(args.server, "", args.name, quick=args.game)
    seat.on_token = lambda new: remember_token(args.server, seat.view.room, args.name, new)
    app = RaceApp(seat, style)
    app.run()
    return 0 if app.return_code in (None, 0) else 1


def _watch(args: argparse.Namespace, style: CardStyle) -> int:
    from client_cli.seat import Seat
    from client_cli.watch_app import WatchApp

    app = WatchApp(Seat(args.server, args.room, spectator=True), style)
    app.run()
    return 0 if app.return_code in (None, 0) else 1


async def _bot(args: argparse.Namespace) -> int:
    from client_cli.bot import play_race
    from client_cli.seat import Seat

    def say(line: str) -> None:
        print(f"{args.name}: {line}", flush=True)

    try:
        return await play_race(Seat(args.server, args.room, args.name), args.pace, say)
    except ConnectionError as error:
        raise ServerError(str(error)) from error
