"""The spectators' feed on its own (server/live/spectators.py): the crowd's queue released
when due and a slice per loop turn, hidden cards face down, and one snapshot for a crowd;
the clock is passed in, as `Race`'s is, and the frames are read back from fake sockets."""

from __future__ import annotations

import asyncio

from support.in_memory import Transport, connection, settled

import core
import protocol as p
from server.live.connection import Connection, Flusher
from server.live.frames import Outgoing
from server.live.spectators import CROWD_CHUNK, SpectatorFeed
from server.room.race import Race, RoomConfig, Status
from server.room.view import FACE_DOWN


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def race_of(game: str = "shaula", **config: object) -> Race:
    race = Race(room="r1", config=RoomConfig(game=game, **config), seed=4, created_at=0.0)  # type: ignore[arg-type]
    assert race.join("ann", "h0", 1.0, "c0")[0] == 0
    assert race.join("bo", "h1", 1.0, "c1")[0] == 1
    return race


def running(race: Race) -> Race:
    race.start(0, 2.0)
    race.tick(10.0)
    assert race.status is Status.RUNNING
    return race


async def no_moves(seat: int) -> list[tuple[float, str]]:
    return []


def crowd(feed: SpectatorFeed, n: int) -> list[tuple[Connection, Transport]]:
    sockets = [connection(f"spy{i}") for i in range(n)]
    feed.spectators.update(conn for conn, _ in sockets)
    return sockets


def progress(
    version: int, at: float, moves: int = 1, move: str = "t1 c1", seat: int = 0
) -> p.Progress:
    return p.Progress(
        version=version,
        at=at,
        seat=seat,
        progress=0,
        moves=moves,
        won=False,
        stuck=False,
        move=move,
    )


async def test_a_delayed_event_waits_until_due_then_reaches_each_spectator_once() -> None:
    clock = Clock(100.0)
    feed = SpectatorFeed("r1", no_moves, clock)
    sockets = crowd(feed, 3)
    race = running(race_of(spectator_delay=5.0))
    event = progress(7, at=100.0)
    feed.publish(event, race, p.to_wire(event))
    try:
        clock.now = 104.9
        feed.serve()
        assert all(out.messages() == [] for _, out in sockets)  # not due yet
        clock.now = 105.0
        feed.serve()
        for _, out in sockets:
            [shown] = out.messages()
            assert isinstance(shown, p.Progress) and shown.version == 7 and shown.move == "t1 c1"
        feed.serve()  # nothing is sent twice
        assert all(len(out.messages()) == 1 for _, out in sockets)
    finally:
        feed.close()


async def test_a_spectator_that_has_an_event_already_is_not_sent_it_again() -> None:
    clock = Clock(50.0)
    feed = SpectatorFeed("r1", no_moves, clock)
    (ahead, ahead_out), (_, behind_out) = crowd(feed, 2)
    ahead.last_version = 3  # its snapshot was of version 3
    race = running(race_of())
    for version in (3, 4):
        event = progress(version, at=50.0, moves=version)
        feed.publish(event, race, p.to_wire(event))
    try:
        feed.serve()
        assert [m.version for m in ahead_out.messages() if isinstance(m, p.Progress)] == [4]
        assert [m.version for m in behind_out.messages() if isinstance(m, p.Progress)] == [3, 4]
    finally:
        feed.close()


async def test_a_crowd_is_written_a_slice_per_loop_turn_after_the_racers() -> None:
    """Between two slices of a crowd's fan-out the loop reads the racers' sockets again;
    each slice's spectators are written at once, the rest wait for the next turns; the
    racers' frames of the turn the event came in (the mover's answer too) go first."""
    feed = SpectatorFeed("crowd", no_moves)
    flusher = Flusher()
    spectators = [connection(flusher=flusher) for _ in range(2 * CROWD_CHUNK + 5)]
    feed.spectators = {conn for conn, _ in spectators}
    racer, racer_transport = connection(flusher=flusher)
    order: list[bytes] = []  # every write, whoever's
    for _, transport in [*spectators, (racer, racer_transport)]:
        transport.write = lambda data, mine=transport.writes: (  # type: ignore[method-assign]
            order.append(data),
            mine.append(data),
        )
    # One turn: the event reaches the racers and the crowd, then the mover's answer.
    racer.send_frame(b"progress ")
    feed.queue.append((0.0, 1, Outgoing(p.Pong(id=1, server_time=0.0))))
    feed.arm()
    racer.send_frame(b"accepted")
    turns = []
    for _ in range(4):  # a slice every other turn
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        turns.append(sum(1 for _, transport in spectators if transport.writes))
    assert order[0] == b"progress accepted"  # the racer's, in one write, before the crowd
    assert turns == [CROWD_CHUNK, 2 * CROWD_CHUNK, len(spectators), len(spectators)]
    assert all(len(transport.writes) == 1 for _, transport in spectators)  # once each


async def test_cards_dealt_to_one_racer_only_are_face_down_until_the_race_is_over() -> None:
    feed = SpectatorFeed("r1", no_moves, Clock(20.0))
    race = running(race_of("moojub", hidden=True))
    await feed.ensure_boards(race)
    start = core.new_game("moojub", race.seed)
    on_board = {c for pile in start.state(view="player")["piles"].values() for c in pile}
    hidden = feed.hidden(race)
    assert hidden and not hidden & on_board  # the talon: dealt to nobody yet
    dealt = progress(5, at=12.0, moves=1, move="deal")  # ann deals, bo has not
    feed.moved(dealt)
    board = feed.board_for(dealt, race, feed.boards)
    assert board is not None
    ann = start.copy()
    ann.apply("deal")
    new = [c for pile in ann.state(view="player")["piles"].values() for c in pile]
    new = [c for c in new if c in hidden]
    assert new  # the cards ann was dealt ...
    shown = [c for pile in board["piles"].values() for c in pile]
    assert shown.count(FACE_DOWN) == len(new) and not set(new) & set(shown)  # ... face down
    feed.moved(progress(6, at=13.0, moves=1, move="deal", seat=1))  # bo deals too
    board = feed.board_for(dealt, race, feed.boards)
    assert board is not None and FACE_DOWN not in [c for pl in board["piles"].values() for c in pl]
    race.status = Status.FINISHED
    assert feed.hidden(race) == frozenset()


async def test_a_crowd_arriving_together_shares_one_snapshot() -> None:
    reads: list[int] = []

    async def moves(seat: int) -> list[tuple[float, str]]:
        reads.append(seat)
        return []

    feed = SpectatorFeed("r1", moves, Clock(30.0))
    race = running(race_of())
    sockets = crowd(feed, 4)

    async def history() -> list[p.Event]:
        return []

    for conn, _ in sockets:
        await feed.send_snapshot(conn, race, race.view(), 6, history)
    await settled()  # the frames leave at the end of the tick
    snapshots = [out.messages() for _, out in sockets]
    assert all(len(s) == 1 and isinstance(s[0], p.Snapshot) for s in snapshots)
    assert all(s == snapshots[0] for s in snapshots)
    assert sorted(reads) == [0, 1]  # each seat read once, for all four
    assert all(conn.last_version == 6 for conn, _ in sockets)
