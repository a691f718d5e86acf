"""A scripted stand-in for the race server, for client tests that need no Redis.

It speaks the real protocol (the `protocol` package) over a real WebSocket: it welcomes
joins and watches with a snapshot, judges a player's moves with the engine (so
refusals carry the engine's reason), and lets the test push any event to every
connection or drop them all, as a network fault would.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve

from core import Game, IllegalMove, new_game
from protocol import (
    CLIENT_TO_SERVER,
    Accepted,
    Error,
    Event,
    Join,
    Message,
    Move,
    PlayerOut,
    Progress,
    Queued,
    QuickCancel,
    QuickMatch,
    Refused,
    Resign,
    Snapshot,
    Undo,
    Unqueued,
    Watch,
    Welcome,
    decode_msgpack,
    encode_msgpack,
)

__all__ = ["FakeServer"]


class FakeServer:
    def __init__(self, room: str = "ABCD", game: str = "shaula", seed: int = 2) -> None:
        self.room = room
        self.game_name = game
        self.seed = seed
        self.version = 0
        self.events: list[Event] = []
        self.players: list[dict[str, Any]] = []
        self.status = "lobby"
        self.start_at: float | None = None
        self.game: Game | None = None
        self.moves: list[str] = []
        self.received: list[Message] = []
        self.connections: set[ServerConnection] = set()
        self.server: Server | None = None
        self.url = ""
        self.held: list[tuple[ServerConnection, Message]] = []
        self.hold_moves = False  # keep moves unanswered (a slow link) until release()
        self.refusal: str | None = None  # refuse every move with this reason
        self.settings: dict[str, Any] = {}  # room settings over the defaults of room_view
        self.rejoin_refusal: Error | None = None  # refuse every join with a token with this

    async def __aenter__(self) -> FakeServer:
        self.server = await serve(self.handler, "127.0.0.1", 0, compression=None)
        port = self.server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    def room_view(self) -> dict[str, Any]:
        return {
            "id": self.room,
            "game": self.game_name,
            "status": self.status,
            "round": 1,
            "seed": self.seed if self.status != "lobby" else None,
            "seats": 4,
            "host": 0,
            "undo": True,
            "hints": False,
            "start_at": self.start_at,
            "players": self.players,
            "results": None,
            **self.settings,
        }

    def stamp(self, event: Event) -> Event:
        """Give `event` the next version, keep it in the log."""
        self.version += 1
        stamped = dataclasses.replace(event, version=self.version, at=time.time())
        self.events.append(stamped)
        return stamped

    async def push(self, event: Event) -> Event:
        stamped = self.stamp(event)
        for ws in list(self.connections):
            await ws.send(encode_msgpack(stamped))
        return stamped

    async def tell(self, msg: Message) -> None:
        """Send `msg` (a direct answer, not a versioned event) to every connection."""
        for ws in list(self.connections):
            await ws.send(encode_msgpack(msg))

    async def release(self) -> None:
        self.hold_moves = False
        held, self.held = self.held, []
        for ws, msg in held:
            for reply in self.answer(msg):
                await ws.send(encode_msgpack(reply))

    async def drop_all(self) -> None:
        for ws in list(self.connections):
            await ws.close(1001)

    async def handler(self, ws: ServerConnection) -> None:
        self.connections.add(ws)
        try:
            async for frame in ws:
                assert isinstance(frame, bytes)
                msg = decode_msgpack(frame, CLIENT_TO_SERVER)
                assert isinstance(msg, Message), msg
                self.received.append(msg)
                if self.hold_moves and isinstance(msg, Move | Undo):
                    self.held.append((ws, msg))
                    continue
                for reply in self.answer(msg):
                    await ws.send(encode_msgpack(reply))
        finally:
            self.connections.discard(ws)

    def answer(self, msg: Message) -> list[Message]:
        now = time.time()
        if isinstance(msg, Join) and msg.token is not None and self.rejoin_refusal:
            return [self.rejoin_refusal]
        if isinstance(msg, Join):
            if msg.token is None:
                self.players.append({"seat": 0, "name": msg.name, "ready": False})
            welcome = Welcome(room=self.room, role="player", server_time=now, seat=0, token="tok")
            if msg.since is not None:
                return [welcome, *(e for e in self.events if e.version > msg.since)]
            return [welcome, self.snapshot(player=True)]
        if isinstance(msg, QuickMatch):
            return [Queued(game=msg.game)]
        if isinstance(msg, QuickCancel):
            return [Unqueued(game=self.game_name)]
        if isinstance(msg, Resign):
            return [self.stamp(PlayerOut(version=0, at=0.0, seat=0, reason="resigned"))]
        if isinstance(msg, Watch):
            welcome = Welcome(room=self.room, role="spectator", server_time=now)
            return [welcome, self.snapshot(player=False)]
        if isinstance(msg, Move | Undo) and self.refusal is not None:
            return [Refused(seq=msg.seq, code="illegal_move", reason=self.refusal)]
        if isinstance(msg, Move | Undo):
            assert self.game is not None
            try:
                if isinstance(msg, Undo):
                    self.game.undo()
                    text = "undo"
                else:
                    self.game.apply(msg.move)
                    text = self.game.history[-1]
            except IllegalMove as refused:
                return [Refused(seq=msg.seq, code="illegal_move", reason=str(refused))]
            self.moves.append(text)
            g = self.game
            event = self.stamp(
                Progress(
                    version=0,
                    at=0.0,
                    seat=0,
                    progress=g.progress,
                    moves=g.moves,
                    won=g.won,
                    stuck=g.stuck,
                    move=text,
                )
            )
            accepted = Accepted(
                seq=msg.seq,
                move=text,
                progress=g.progress,
                moves=g.moves,
                won=g.won,
                stuck=g.stuck,
                version=event.version,
            )
            return [accepted, event]
        return []

    def snapshot(self, player: bool) -> Snapshot:
        board = self.game.state(view="player") if self.game else None
        if player:
            return Snapshot(
                version=self.version, room=self.room_view(), board=board, moves=list(self.moves)
            )
        boards = {str(p["seat"]): board for p in self.players} if board else None
        return Snapshot(version=self.version, room=self.room_view(), boards=boards)

    def begin(self) -> None:
        """The race state a RaceStarted event announces."""
        self.status = "running"
        self.game = new_game(self.game_name, self.seed)

    async def wait_for(self, kind: type[Message], count: int = 1, timeout: float = 5.0) -> None:
        async with asyncio.timeout(timeout):
            while sum(isinstance(m, kind) for m in self.received) < count:
                await asyncio.sleep(0.01)
