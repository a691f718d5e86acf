"""The network subcommands: play, watch, rooms and bot.

Rooms are created and listed over the server's HTTP API; everything else goes
over the WebSocket (see `seat` and `net`).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import re
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import aiohttp
from rich.console import Console
from rich.table import Table

from client_cli.cards import CardStyle
from client_cli.identity import Identity, quick_match_free
from client_cli.memory import StoredSeat, remember_seat, state_file, stored_seats
from client_cli.net import foreign_status, http_url, no_server, not_solrace

__all__ = [
    "ServerError",
    "choose_seat",
    "create_room",
    "default_name",
    "foreign_answer",
    "get_room",
    "list_rooms",
    "room_settings",
    "rooms_table",
    "run",
]

HTTP_TIMEOUT = aiohttp.ClientTimeout(total=10)
# A room's status past the lobby, in words: "the race in room X is ..."
RACE_NOW = {"countdown": "about to start", "running": "running", "finished": "over"}


def default_name() -> str:
    """The account's name (the environment's, else the password database's, as USER is
    not set everywhere); none: the server names the seat ("player N"). Two players on
    one machine get it both: the server numbers the second ("ann 2")."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # an id with no account: a container's random uid
        return ""


class ServerError(Exception):
    """The server could not be reached or refused the request; the message says why, and
    `code` is the server's error code when it answered one."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


def foreign_answer(server: str) -> ServerError:
    """A 2xx answer solrace never gives (a JSON API of another kind at a wrong port), or one
    without what the request is answered with."""
    return ServerError(not_solrace(server, "JSON that is not solrace's"))


async def _request(
    method: str,
    server: str,
    path: str,
    body: dict[str, Any] | None = None,
    key: str | None = None,
) -> Any:
    """The JSON answer of a request; `key`: the player key it acts as (Bearer)."""
    url = http_url(server, path)
    headers = {"Authorization": f"Bearer {key}"} if key else None
    try:
        async with (
            aiohttp.ClientSession(timeout=HTTP_TIMEOUT) as http,
            http.request(method, url, json=body, headers=headers) as response,
        ):
            try:
                data = await response.json(content_type=None)
            except ValueError:
                data = None
            error = data.get("error") if isinstance(data, dict) else None
            if response.status >= 400 and error is not None:
                detail = error.get("message", error) if isinstance(error, dict) else error
                code = str(error.get("code", "")) if isinstance(error, dict) else ""
                raise ServerError(f"the server said no ({response.status}): {detail}", code)
            answer = f"HTTP {response.status}"
            if response.status >= 400 and not foreign_status(response.status):
                raise ServerError(f"cannot reach {url}: {answer}")  # busy, or a balancer's
            if data is None or response.status >= 400:  # not solrace's JSON
                raise ServerError(not_solrace(server, answer))
            if not isinstance(data, dict):  # every answer of solrace's is an object
                raise foreign_answer(server)
            return data
    except aiohttp.ClientConnectorError as error:
        raise ServerError(no_server(server)) from error
    except (aiohttp.ClientError, TimeoutError, ValueError) as error:
        raise ServerError(f"cannot reach {url}: {error or error.__class__.__name__}") from error


async def create_room(
    server: str, settings: dict[str, Any], key: str | None = None
) -> dict[str, Any]:
    """POST /rooms: a new room from `settings` (game, seats, seed, undo, hints); `key`: the
    player it is for (a ghost of your best, or of a daily attempt, needs who you are)."""
    data = await _request("POST", server, "/rooms", settings, key=key)
    room = data.get("room", data) if isinstance(data, dict) else data
    if isinstance(room, str):
        return {"id": room}
    if not isinstance(room, dict) or "id" not in room:
        raise ServerError(f"unexpected answer to POST /rooms: {data!r}")
    return room


async def get_room(server: str, room: str) -> dict[str, Any]:
    """GET /rooms/ID: one room's view (ServerError when there is no such room)."""
    data = await _request("GET", server, f"/rooms/{quote(room, safe='')}")
    found = data.get("room") if isinstance(data, dict) else None
    if not isinstance(found, dict):
        raise ServerError(f"unexpected answer to GET /rooms/{room}: {data!r}")
    return found


async def list_rooms(server: str) -> list[dict[str, Any]]:
    """GET /rooms: the room views the server lists."""
    rooms = (await _request("GET", server, "/rooms")).get("rooms")
    if not isinstance(rooms, list):
        raise foreign_answer(server)
    return [r for r in rooms if isinstance(r, dict)]


def rooms_table(rooms: list[dict[str, Any]]) -> Table:
    from client_cli.widgets import clock

    table = Table(title="solrace rooms")
    for column in ("room", "game", "status", "players", "rules"):
        table.add_column(column)
    for room in rooms:
        players = room.get("players") or []
        names = ", ".join(
            f"{p.get('name', '?')}{' (bot)' if p.get('bot') else ''}"
            for p in players
            if isinstance(p, dict)
        )
        seats = room.get("seats")
        count = f"{len(players)}/{seats}" if seats else str(len(players))
        rules = [
            "rated" if room.get("rated") else "casual",
            "undo" if room.get("undo", True) else "no undo",
            "hints" if room.get("hints") else "no hints",
        ]
        limit = room.get("time_limit")
        if isinstance(limit, int | float) and limit:  # as the lobby says it
            rules.append(f"time limit {clock(limit)}")
        table.add_row(
            str(room.get("id", "?")),
            str(room.get("game", "?")),
            str(room.get("status", "?")),
            f"{count} {names}".strip(),
            ", ".join(rules),
        )
    return table


def room_settings(args: argparse.Namespace) -> dict[str, Any]:
    """POST /rooms's body: only what was asked for, so that every other setting is the
    server's default, the same as for a room created with curl."""
    ghost = getattr(args, "ghost", None)
    # A ghost race's game, deal and seats are its recorded race's.
    settings: dict[str, Any] = {"ghost": ghost} if ghost else {"game": args.game}
    for option in ("seats", "hints", "undo", "rated", "time_limit", "spectator_delay"):
        value = getattr(args, option)
        if value is not None and not (ghost and option == "seats"):
            settings[option] = value
    if ghost == "best":  # your own fastest win at --game
        settings["game"] = args.game
    if ghost and getattr(args, "ghost_seat", None) is not None:
        settings["ghost_seat"] = args.ghost_seat - 1  # people count seats from 1
    if args.seed is not None and not ghost:
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
            room = args.room or _new_room(args)
            return _play(args, room, style)
        if args.command == "watch":
            return _watch(args, style)
    except ServerError as error:
        print(f"solrace {args.command}: {error}", file=sys.stderr)
        return 1
    raise SystemExit(f"unknown command {args.command!r}")


# The server's refusal of a ghost_seat, naming the race's seats as the wire counts them.
BAD_GHOST_SEAT = re.compile(r"ghost_seat must be one of \[([0-9, ]*)\]")


def _new_room(args: argparse.Namespace) -> str:
    """A new room for `solrace play` (a ghost race: for this machine's player, whose best
    or daily attempt it may be); its id."""
    key = _who(args)[1] if args.ghost else None  # a new room: no other terminal in it yet
    try:
        return str(asyncio.run(create_room(args.server, room_settings(args), key))["id"])
    except ServerError as error:
        raise ghost_seat_refused(error, args) from None


def ghost_seat_refused(error: ServerError, args: argparse.Namespace) -> ServerError:
    """The server's refusal of --ghost-seat in the terms of the command line, whose seats
    count from 1 where the wire's count from 0; any other refusal as it is."""
    found = BAD_GHOST_SEAT.search(str(error))
    if found is None or error.code != "bad_request" or args.ghost_seat is None:
        return error
    seats = [str(int(seat) + 1) for seat in found.group(1).replace(",", " ").split()]
    if not seats:
        return error
    had = f"seats {', '.join(seats[:-1])} and {seats[-1]}" if seats[1:] else f"only seat {seats[0]}"
    race = f"your fastest {args.game} win" if args.ghost == "best" else f"race {args.ghost}"
    return ServerError(
        f"{race} had {had}: --ghost-seat {args.ghost_seat} is none of them", error.code
    )


def choose_seat(
    server: str,
    view: dict[str, Any],
    name: str | None,
    pick: int | None,
    ask: Callable[[list[str]], int],
) -> str | None:
    """The token of the seat to take back in the room `view`, or None for a new seat.

    Every seat this machine took in the room is a candidate, whatever name it was taken
    under (`name`, when given, narrows them down if it matches one); `pick` is a seat
    number counted from 1 (--seat); several candidates: `ask` is given their labels and
    returns an index. In the lobby a seat connected right now is another terminal's (a
    friend's, say): it is left alone, and "a new seat" is one of the choices. Past the
    lobby no new seat can be had: ServerError says how to get one back, or to watch.
    """
    room = str(view.get("id", ""))
    players = {p.get("seat"): p for p in view.get("players") or [] if isinstance(p, dict)}
    held = [s for s in stored_seats(server, room) if s.seat is None or s.seat in players]
    held.sort(key=lambda s: -1 if s.seat is None else s.seat)
    lobby = view.get("status") == "lobby"
    if lobby:
        held = [s for s in held if s.seat is None or not players[s.seat].get("connected")]
    named = [s for s in held if s.name == name]
    if named or (lobby and name is not None):
        held = named

    def label(seat: StoredSeat) -> str:
        if seat.seat is None:
            return f"{seat.name} (seat number unknown)"
        return f"seat {seat.seat + 1}: {players[seat.seat].get('name', seat.name)}"

    if pick is not None:
        found = [s for s in held if s.seat == pick - 1]
        if not found:
            have = "; ".join(map(label, held)) or "none"
            raise ServerError(f"this machine holds no seat {pick} in room {room} (it has: {have})")
        return found[-1].token
    if not held:
        if lobby:
            return None
        raise ServerError(
            f"the race in room {room} is {RACE_NOW.get(str(view.get('status')), 'on')} and"
            " this machine holds no seat in"
            f" it (the seats taken here are kept in {state_file()}): run `solrace play {room}`"
            f" where you took your seat to take it back, or watch: `solrace watch {room}`"
        )
    if len(held) == 1:
        return held[0].token
    options = [label(s) for s in held] + (["a new seat"] if lobby else [])
    choice = ask(options)
    return held[choice].token if choice < len(held) else None


def ask_in_terminal(room: str) -> Callable[[list[str]], int]:
    """Ask on the terminal which seat to take; with no terminal, say how to pick one."""

    def ask(options: list[str]) -> int:
        listed = "; ".join(f"{i}) {o}" for i, o in enumerate(options, start=1))
        if not sys.stdin.isatty():
            raise ServerError(
                f"this machine holds several seats in room {room} ({listed}): "
                "choose one with --seat N"
            )
        print(f"This machine holds several seats in room {room}:")
        for i, option in enumerate(options, start=1):
            print(f"  {i}) {option}")
        while True:
            try:
                answer = input(f"Which one? [1-{len(options)}, q quits] ").strip()
            except EOFError:
                answer = "q"
            if answer.lower() == "q":  # as on every screen of the client
                raise ServerError("no seat chosen")
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                return int(answer) - 1

    return ask


def _play(args: argparse.Namespace, room: str, style: CardStyle) -> int:
    from client_cli.race_app import RaceApp, watch_instead
    from client_cli.seat import Seat

    view = asyncio.run(get_room(args.server, room))
    token = choose_seat(args.server, view, args.name, args.seat, ask_in_terminal(room))
    seats, taken = view.get("seats"), len(view.get("players") or [])
    if token is None and isinstance(seats, int) and taken >= seats:
        raise ServerError(
            f"every seat of room {room} is taken ({taken}/{seats}): {watch_instead(room)}"
        )

    def seated_elsewhere(me: Identity) -> bool:
        # In the lobby a seat of this player connected right now is another terminal's:
        # joined as the player, this one would be given that very seat.
        return token is None and any(
            p.get("player") == me.get("id") and p.get("connected")
            for p in view.get("players") or []
        )

    name, key, notice = _who(args, seated_elsewhere)
    seat = Seat(args.server, room, name, token=token, key=key)
    seat.on_token = lambda new: remember_seat(args.server, room, name, new, seat.view.seat)
    app = RaceApp(seat, style, notice)
    app.run()
    return 0 if app.return_code in (None, 0) else 1


def _who(
    args: argparse.Namespace, in_use: Callable[[Identity], bool] = lambda me: False
) -> tuple[str, str | None, str]:
    """The seat's name, the player key it acts as, and what to tell the user about it:
    this machine's player (its key, client_cli/identity.py; the server names the seat after
    the player), or with --name an anonymous seat of that name (a friend at this machine,
    say). When another terminal here plays as the player already (`in_use`), this one
    plays an anonymous seat, as with --name, under the player's name (the server numbers
    it if the room has that name: `ann 2`), so that two terminals race each other."""
    if args.name is not None:
        return args.name, None, ""
    from client_cli.account import ensure_player

    me = asyncio.run(ensure_player(args.server))
    name = str(me.get("name") or default_name())
    if not in_use(me):
        return name, me.key, ""
    return (
        name,
        None,
        f"{name} (this machine's player) is playing in another terminal: this one plays an"
        f" anonymous seat under that name, numbered where the room has it (--name NAME names"
        " it)",
    )


def _quick(args: argparse.Namespace, style: CardStyle) -> int:
    """A quick match: queue for the game, race the next player who asks for it."""
    from client_cli.race_app import RaceApp
    from client_cli.seat import Seat

    with quick_match_free(args.server) as free:
        name, key, notice = _who(args, lambda me: not free)
        seat = Seat(args.server, "", name, quick=args.game, key=key)
        seat.on_token = lambda new: remember_seat(
            args.server, seat.view.room, name, new, seat.view.seat
        )
        app = RaceApp(seat, style, notice)
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
        print(f"bot: {line}", flush=True)

    from client_cli.account import bot_player

    # The bot plays as a bot player of its own (labelled a bot everywhere, never rated),
    # one per name.
    me = await bot_player(args.server, args.name)
    try:
        view = await get_room(args.server, args.room)
    except ServerError:
        view = {}  # (no such room: the join says so)
    if any(
        p.get("player") == me.get("id") and p.get("connected")
        for p in view.get("players") or []
        if isinstance(p, dict)
    ):
        # Joined, it would be given that very seat (a player holds one seat of a room),
        # and the two would play it against each other.
        raise ServerError(
            f"{me.get('name')} is playing in room {args.room} already (in another terminal):"
            " give --name NAME to race another bot of this machine's there"
        )
    try:
        seat = Seat(args.server, args.room, str(me.get("name")), key=me.key)
        return await play_race(seat, args.pace, say, rematch=args.rematch)
    except ConnectionError as error:
        raise ServerError(str(error)) from error
