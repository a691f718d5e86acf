"""What each member of a room sees: one pure function for events, one for boards.

Used alike by the live fan-out, by catch-up after a reconnect and by snapshots
(server/live/hub.py), and tested without Redis or sockets (tests/server/room/test_view.py). Like
boardgame.io's `playerView` and lila-ws's `versionFor`: the room keeps the full truth;
what leaves it is filtered here, once per kind of viewer, not once per socket.

Viewers of an event:
- the MOVER (the player whose move a `progress` is) gets it whole, without a board
  (a player's own board comes with `accepted`);
- an OPPONENT (any other player) gets `progress` without the move and without a board:
  progress only;
- a SPECTATOR gets every event `spectator_delay` seconds after it happened, with the
  move, and in a game with hidden cards (Moojub) with the mover's board.

Hidden cards (Moojub's talon is one order shared by every racer): no frame to a spectator
shows a card that a racer still racing has not been dealt yet. Such cards are sent face
down (`FACE_DOWN`) until every racer still racing has been dealt them, or the race is over.
A racer watching their own room on a second connection is a spectator like any other.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any

import core
import protocol as p

__all__ = [
    "FACE_DOWN",
    "Viewer",
    "deal_order",
    "hidden_cards",
    "room_as_of",
    "shown_board",
    "spectator_due",
    "view_event",
    "viewer_of",
]

FACE_DOWN = "??"


class Viewer(enum.Enum):
    MOVER = "mover"
    OPPONENT = "opponent"
    SPECTATOR = "spectator"


def deal_order(game: str, seed: int) -> tuple[str, ...]:
    """Every card of a hidden-card deal in the order racers are dealt them (the cards
    face up at the start first); empty for a game without hidden cards."""
    start = core.new_game(game, seed)
    if not start.has_talon:
        return ()
    state = start.state(view="full")
    reserves = [card for pid in start.pile_ids for card in state["piles"][pid]]
    return (*reserves, *state["talon"])


def hidden_cards(order: tuple[str, ...], talons: Iterable[int]) -> frozenset[str]:
    """The cards of `order` not yet dealt to every racer still racing, given the talon
    sizes of those racers' boards (none racing: nothing is hidden)."""
    sizes = list(talons)
    if not order or not sizes:
        return frozenset()
    dealt = len(order) - max(sizes)
    return frozenset(order[dealt:])


def shown_board(board: Mapping[str, Any], hidden: frozenset[str]) -> dict[str, Any]:
    """`board` (a player-view state) with the `hidden` cards face down."""
    if not hidden:
        return dict(board)
    piles = {
        pid: [FACE_DOWN if card in hidden else card for card in cards]
        for pid, cards in board["piles"].items()
    }
    return {**board, "piles": piles}


def viewer_of(seat: int | None, mover: int | None) -> Viewer:
    """Who a socket is to an event: `seat` is its seat (None: a spectator), `mover` the
    seat the event is about when it is a move (`progress`), else None."""
    if seat is None:
        return Viewer.SPECTATOR
    return Viewer.OPPONENT if mover is not None and mover != seat else Viewer.MOVER


def view_event(
    wire: dict[str, Any], viewer: Viewer, board: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The wire map of an event (`p.to_wire(event)`) as `viewer` may see it.

    `board`: in a hidden-card game, the board to attach: to a `progress` for a spectator
    (already passed through `shown_board`), to a `started` for everyone (the starting
    board: the cards every racer is dealt at once).

    The answer is `wire` itself when the viewer sees it as it is (the hot path of every
    move: no copy), else a new map; neither is to be changed by the caller."""
    kind = wire.get("type")
    if kind == p.Progress.TYPE:
        hide_move = viewer is Viewer.OPPONENT
        show_board = viewer is Viewer.SPECTATOR and board is not None
        if not hide_move and not show_board and "board" not in wire:
            return wire
        out = dict(wire)
        out.pop("board", None)
        if hide_move:
            out.pop("move", None)
        elif show_board:
            out["board"] = board
        return out
    if kind == p.RaceStarted.TYPE and board is not None:
        return {**wire, "board": board}  # the starting board: the same for everyone
    return wire


def spectator_due(event: p.Event, delay: float) -> float:
    """When a spectator may see `event` (server time)."""
    return event.at + delay


def room_as_of(
    room: p.RoomView,
    pending: Iterable[p.Event],
    hidden: bool,
    last_end: p.RaceFinished | None = None,
) -> None:
    """Take back from `room` (the room now, changed in place) what the race's `pending`
    events did to its phase: a delayed spectator's snapshot is the room as of the version
    before them (they follow, each when due). Covered: the countdown, the start, players
    out, the end, rematch votes and a new round (whose round's end is `last_end`, the last
    `finished` before the pending events: its results, and each racer's out, progress,
    moves and splits as it ended); else the players' progress comes from the boards
    (before a pending start, nothing played), and seats, readiness and presence stay as
    they are now. `hidden`: the seed is secret
    until the end."""
    players = {player["seat"]: player for player in room["players"]}
    for event in reversed(list(pending)):
        if isinstance(event, p.RaceFinished):
            room["status"] = "running"
            room["results"] = room["finished_at"] = room["finish_reason"] = None
            if hidden:
                room["seed"] = None
        elif isinstance(event, p.PlayerOut) and event.seat in players:
            players[event.seat]["out"] = None
        elif isinstance(event, p.RaceStarted):
            room["status"] = "countdown"
            room["seed"] = room["ends_at"] = None
            for player in players.values():  # nothing was played before the start
                player["progress"] = player["moves"] = 0
                player["won"] = player["stuck"] = False
                player["splits"] = [None] * len(player["splits"])
        elif isinstance(event, p.Countdown):
            room["status"] = "lobby"
            room["start_at"] = None
        elif isinstance(event, p.RematchVote) and event.seat in players:
            players[event.seat]["rematch"] = False
        elif isinstance(event, p.NewRound):
            room["status"] = "finished"
            room["round"] = event.round - 1
            if last_end is not None:
                room["seed"], room["results"] = last_end.seed, list(last_end.results)
                room["finished_at"], room["finish_reason"] = last_end.at, last_end.reason
                for result in last_end.results:  # each racer as the round ended
                    if (racer := players.get(result["seat"])) is not None:
                        racer["out"], racer["progress"] = result["out"], result["progress"]
                        racer["moves"], racer["won"] = result["moves"], result["won"]
                        racer["stuck"], racer["splits"] = result["stuck"], list(result["splits"])
