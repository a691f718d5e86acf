"""What each viewer sees (server/room/view.py), without Redis or sockets."""

from __future__ import annotations

import core
import protocol as p
from server.room.view import (
    FACE_DOWN,
    Viewer,
    deal_order,
    hidden_cards,
    room_as_of,
    shown_board,
    spectator_due,
    view_event,
    viewer_of,
)

PROGRESS = p.Progress(
    version=7, at=10.0, seat=1, progress=3, moves=4, won=False, stuck=False, move="t1 c1"
)


def test_who_is_who_to_a_move() -> None:
    assert viewer_of(None, 1) is Viewer.SPECTATOR
    assert viewer_of(1, 1) is Viewer.MOVER
    assert viewer_of(0, 1) is Viewer.OPPONENT
    assert viewer_of(0, None) is Viewer.MOVER  # not a move: everyone sees it whole


def test_a_move_as_each_viewer_sees_it() -> None:
    wire = p.to_wire(PROGRESS)
    board = {"piles": {"r1": ["AH"]}}
    mover = view_event(wire, Viewer.MOVER, board)
    opponent = view_event(wire, Viewer.OPPONENT, board)
    spectator = view_event(wire, Viewer.SPECTATOR, board)
    assert mover == wire and "board" not in mover  # the mover's board comes with accepted
    assert "move" not in opponent and "board" not in opponent
    assert opponent["progress"] == 3 and opponent["version"] == 7
    assert spectator["move"] == "t1 c1" and spectator["board"] == board
    assert view_event(wire, Viewer.SPECTATOR) == wire  # an open game: no board
    assert wire == p.to_wire(PROGRESS)  # the input is not changed


def test_the_start_board_goes_to_everyone_and_other_events_pass_as_they_are() -> None:
    started = p.to_wire(p.RaceStarted(version=6, at=9.0, game="moojub"))
    board = {"piles": {}}
    for viewer in Viewer:
        assert view_event(started, viewer, board)["board"] == board
    left = p.to_wire(p.PlayerLeft(version=3, at=2.0, seat=1))
    assert all(view_event(left, viewer) == left for viewer in Viewer)


def test_spectators_see_events_after_the_delay() -> None:
    assert spectator_due(PROGRESS, 0.0) == 10.0
    assert spectator_due(PROGRESS, 30.0) == 40.0


def test_the_deal_order_is_the_talon_after_the_starting_reserves() -> None:
    assert deal_order("shaula", 617) == ()  # no hidden cards
    order = deal_order("moojub", 845)
    full = core.new_game("moojub", 845).state(view="full")
    assert len(order) == 52 == len(set(order))
    assert order[4:] == tuple(full["talon"])
    assert set(order[:4]) == {full["piles"][r][0] for r in ("r1", "r2", "r3", "r4")}


def test_only_cards_every_racer_still_racing_was_dealt_are_shown() -> None:
    order = deal_order("moojub", 845)
    # Racers with 48 and 40 cards left in their talons: the slower one was dealt 4.
    hidden = hidden_cards(order, [48, 40])
    assert hidden == frozenset(order[4:])
    assert hidden_cards(order, [40, 36]) == frozenset(order[12:])
    assert hidden_cards(order, []) == frozenset()  # nobody racing: nothing hidden
    assert hidden_cards((), [48]) == frozenset()  # an open game

    game = core.new_game("moojub", 845)
    game.apply("deal")
    board = game.state(view="player")
    shown = shown_board(board, hidden_cards(order, [48, 44]))
    reserves = [shown["piles"][r] for r in ("r1", "r2", "r3", "r4")]
    assert all(pile[1] == FACE_DOWN for pile in reserves)  # dealt to one racer only
    assert [pile[0] for pile in reserves] == [
        board["piles"][r][0] for r in ("r1", "r2", "r3", "r4")
    ]
    assert shown_board(board, frozenset()) == board
    assert board["piles"]["r1"][1] != FACE_DOWN  # the board itself is not changed


def test_room_as_of_takes_back_what_the_pending_events_did() -> None:
    """A delayed spectator's snapshot: the room now, without the effects of the events
    still on their way (a Moojub race that ended then voted a rematch, here)."""
    room: p.RoomView = {  # only the keys room_as_of reads
        "status": "countdown",
        "round": 2,
        "seed": 845,
        "results": None,
        "finished_at": None,
        "finish_reason": None,
        "start_at": 9.0,
        "ends_at": None,
        "players": [{"seat": 0, "out": None, "rematch": False}],
    }  # type: ignore[typeddict-item]
    pending: list[p.Event] = [
        p.PlayerOut(version=5, at=1.0, seat=0, reason="resigned"),
        p.RaceFinished(version=6, at=1.0, results=[], seed=845, reason="all_done"),
        p.RematchVote(version=7, at=2.0, seat=0),
        p.NewRound(version=8, at=2.0, round=2),
        p.Countdown(version=9, at=2.0, start_at=9.0),
    ]
    room_as_of(room, pending, hidden=True)
    assert room["status"] == "running" and room["round"] == 1
    assert room["seed"] is None and room["start_at"] is None
    assert room["players"][0]["out"] is None


def test_a_snapshot_from_before_the_start_shows_nothing_played() -> None:
    """The race started and its racer moved within the delay: as of the version before
    the start, nobody has moved (the racer's live count and progress showed)."""
    room: p.RoomView = {  # only the keys room_as_of reads
        "status": "running",
        "round": 1,
        "seed": 617,
        "start_at": 3.0,
        "ends_at": None,
        "players": [
            {
                "seat": 0,
                "out": None,
                "progress": 1,
                "moves": 4,
                "won": False,
                "stuck": False,
                "splits": [None, None, None, None],
            },
        ],
    }  # type: ignore[typeddict-item]
    pending: list[p.Event] = [
        p.RaceStarted(version=5, at=3.0, game="shaula", seed=617),
        p.Progress(version=6, at=3.5, seat=0, progress=1, moves=4, won=False, stuck=False),
    ]
    room_as_of(room, pending, hidden=False)
    assert room["status"] == "countdown"
    player = room["players"][0]
    assert (player["progress"], player["moves"], player["won"], player["stuck"]) == (
        0,
        0,
        False,
        False,
    )
