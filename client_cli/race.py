"""The client's picture of one room, fed the server's messages (no I/O, no clock).

Like the server's own state machines, this takes a message and updates plain
data; the screens draw from it and the bot plays from it. It keeps:
- the room: game, seed, phase, seats and each racer's progress, moves and status;
- the player's own board, replayed locally on an engine for open games (so key
  picks, autoplay and hints work offline-fast) or taken from the server's board
  for Moojub, whose seed stays secret during a race;
- for spectators, every board;
- the last event version, to reconnect with `since` and to notice a gap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core import GAME_CLASSES, Game, IllegalMove, from_state, new_game
from protocol import (
    Accepted,
    Countdown,
    Event,
    Matched,
    Message,
    NewRound,
    PlayerJoined,
    PlayerLeft,
    PlayerOut,
    PlayerReady,
    Presence,
    Progress,
    Queued,
    RaceFinished,
    RaceStarted,
    RematchVote,
    Snapshot,
    Welcome,
)

__all__ = ["CARDS", "RaceView", "Racer", "no_rematch", "visible_game"]

CARDS = [r + s for s in "CDHS" for r in "A23456789TJQK"]
SETTINGS = (
    "seats",
    "undo",
    "hints",
    "time_limit",
    "spectator_delay",
    "grace",
    "seed_mode",
    "rated",
)


def no_rematch(room: Mapping[str, Any]) -> str:
    """Why a room (its ROOM object) has no rematch, for a player to read; "" when it has
    one. A ghost race, a tournament's race and a daily attempt have none (protocol.md)."""
    if room.get("ghost"):
        return f"a ghost race has no rematch: race it anew: solrace play --ghost {room['ghost']}"
    if room.get("tournament"):
        return "a tournament's race has no rematch: the tournament goes on"
    if room.get("daily"):
        game = room.get("game", "GAME")
        return f"a daily attempt has no rematch: solrace daily {game} --practice plays it again"
    return ""


def visible_game(board: Mapping[str, Any]) -> Game:
    """An engine over a player's view, to list the moves it allows.

    A Moojub view hides the talon; any order of the missing cards gives the same
    legal moves (only `deal` reads the talon, and the server plays that).
    """
    data = dict(board)
    if data.get("game") == "moojub" and "talon" not in data:
        seen = {c for cards in data["piles"].values() for c in cards}
        data["talon"] = [c for c in CARDS if c not in seen]
    if data.get("seed") is None:
        data.pop("seed", None)
    return from_state(data)


@dataclass
class Racer:
    seat: int
    name: str
    ready: bool = False
    connected: bool = True
    progress: int = 0
    moves: int = 0
    won: bool = False
    stuck: bool = False
    out: str | None = None  # "resigned", "forfeit"
    finished_at: float | None = None  # server time of the last progress when it ended
    grace_until: float | None = None  # offline mid-race: forfeits at this server time
    rematch: bool = False  # voted for a rematch after the end
    ghost: bool = False  # a recorded run raced again (docs/protocol.md "Ghost races")
    bot: bool = False  # a bot's seat: shown as one

    @property
    def shown_name(self) -> str:
        return f"{self.name} (bot)" if self.bot else self.name

    # Seconds since the start at each quarter of the cards up (docs/protocol.md "Splits").
    splits: list[float | None] = field(default_factory=lambda: [None] * 4)

    def new_round(self) -> None:
        """A rematch: the same player, a fresh race (the server makes everyone ready)."""
        self.progress = self.moves = 0
        self.splits = [None] * 4
        self.won = self.stuck = self.rematch = False
        self.out = None
        self.finished_at = None
        self.ready = True

    @property
    def status(self) -> str:
        if self.won:
            return "finished (ghost)" if self.ghost else "finished"
        if self.out:
            return f"{self.out} (ghost)" if self.ghost else self.out
        if self.ghost:
            return "ghost"
        if self.stuck:
            return "stuck"
        if not self.connected:
            return "offline"
        return ""


@dataclass
class RaceView:
    room: str
    role: str = "player"
    seat: int | None = None
    token: str | None = None
    # One's best splits in the room's game (the welcome's `best`), for the delta at each.
    best: tuple[float | None, ...] = ()
    version: int = 0
    clock_offset: float = 0.0  # server time minus local time, from the welcome
    phase: str = "lobby"  # queue (quick match), lobby, countdown, running, finished
    game: str = ""
    seed: int | None = None
    start_at: float | None = None
    ends_at: float | None = None
    finished_at: float | None = None  # server time of the end: every clock stops there
    settings: dict[str, Any] = field(default_factory=dict)
    racers: dict[int, Racer] = field(default_factory=dict)
    results: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = ""
    board: dict[str, Any] | None = None
    engine: Game | None = None
    boards: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Spectators replay each board on an engine of its own, so an undo replays too.
    board_engines: dict[int, Game] = field(default_factory=dict)
    gap: bool = False  # an event went missing: ask for a resync
    round: int = 1
    no_rematch: str = ""  # why the room has no rematch, when it has none (`no_rematch`)

    # ------------------------------------------------------------ reading

    @property
    def total(self) -> int:
        """The cards a racer puts up to win (the engine's count; 52 until the game is known)."""
        game = GAME_CLASSES.get(self.game)
        return 52 if game is None else game.progress_total

    @property
    def deal(self) -> str:
        """The game and, once public, the deal's number: "Shaula #617" ("Moojub" while its
        seed is secret: in a race, and after a tournament heat that others still race)."""
        name = self.game.capitalize()
        return name if self.seed is None else f"{name} #{self.seed}"

    @property
    def ended_by(self) -> str:
        """Why the race ended, in words, when not the usual way (everyone done): "time up"
        (its time limit); "" otherwise."""
        return "time up" if self.finish_reason == "time_up" else ""

    @property
    def me(self) -> Racer | None:
        return None if self.seat is None else self.racers.get(self.seat)

    @property
    def host(self) -> bool:
        # The server's rule: the host is the lowest seat taken.
        return self.seat is not None and bool(self.racers) and self.seat == min(self.racers)

    def allows(self, what: str) -> bool:
        """Room settings "undo" and "hints" (the server's defaults until the room is known)."""
        return bool(self.settings.get(what, what == "undo"))

    def server_now(self, local_now: float) -> float:
        return local_now + self.clock_offset

    def clock_end(self, racer: Racer, local_now: float) -> float | None:
        """When `racer`'s clock stopped (server time), or None when that is unknown
        (done before we joined, and not a winner the results time)."""
        if racer.finished_at is not None:
            return racer.finished_at
        if racer.won or racer.stuck or racer.out:
            return self.finished_at
        return self.finished_at if self.finished_at is not None else self.server_now(local_now)

    def legal_moves(self) -> list[str] | None:
        return None if self.engine is None else self.engine.legal_moves()

    def rematch_votes(self) -> tuple[int, int]:
        """Players who voted for a rematch, out of all players."""
        return sum(r.rematch for r in self.racers.values()), len(self.racers)

    # ------------------------------------------------------------ feeding

    def feed(self, msg: Message) -> None:
        """Take one server message into account."""
        if isinstance(msg, Event):
            if msg.version <= self.version:
                return  # already seen (a replay after reconnecting)
            if msg.version > self.version + 1 and self.version:
                self.gap = True
            self.version = msg.version
        handler = getattr(self, f"_on_{type(msg).__name__}", None)
        if handler is not None:
            handler(msg)

    def _on_Queued(self, msg: Queued) -> None:
        self.phase = "queue"
        self.game = msg.game

    def _on_Matched(self, msg: Matched) -> None:
        """A quick match: seated in a new room (its welcome and snapshot follow)."""
        self.room, self.seat, self.token = msg.room, msg.seat, msg.token
        self.phase = "lobby"
        self.version = 0

    def _on_Welcome(self, msg: Welcome) -> None:
        self.role = msg.role
        if msg.seat is not None:
            self.seat = msg.seat
        if msg.token:
            self.token = msg.token
        self.best = tuple(msg.best["splits"]) if msg.best else ()

    def _on_Snapshot(self, msg: Snapshot) -> None:
        self.version = msg.version
        self.gap = False
        self._load_room(msg.room)
        if msg.board is not None:
            self._load_own_board(msg.board, msg.moves or [])
        if msg.boards is not None:
            self.boards = {int(seat): dict(board) for seat, board in msg.boards.items()}
            self.board_engines = {}

    def _load_room(self, room: Mapping[str, Any]) -> None:
        self.game = str(room.get("game", self.game))
        self.seed = room.get("seed", self.seed)
        self.phase = str(room.get("status", self.phase))
        self.start_at = room.get("start_at", self.start_at)
        self.finished_at = room.get("finished_at", self.finished_at)
        self.ends_at = room.get("ends_at", self.ends_at)
        self.finish_reason = str(room.get("finish_reason") or "")
        self.round = int(room.get("round", self.round))
        self.settings = {key: room[key] for key in SETTINGS if key in room}
        self.no_rematch = no_rematch(room)
        results = room.get("results")
        if isinstance(results, list):
            self.results = results
        seats = room.get("players", [])
        racers: dict[int, Racer] = {}
        for i, p in enumerate(seats):
            if not isinstance(p, Mapping):
                continue
            seat = int(p.get("seat", i))
            racer = Racer(seat=seat, name=str(p.get("name", f"seat {seat + 1}")))
            for key in ("ready", "connected", "won", "stuck", "rematch", "ghost", "bot"):
                if key in p:
                    setattr(racer, key, bool(p[key]))
            for key in ("progress", "moves"):
                if key in p:
                    setattr(racer, key, int(p[key]))
            if isinstance(p.get("splits"), list):
                racer.splits = list(p["splits"])
            racer.out = p.get("out") or None
            grace_until = p.get("grace_until")
            if not racer.connected and isinstance(grace_until, int | float):
                racer.grace_until = grace_until  # as a `presence` gives it
            racers[seat] = racer
        self.racers = racers
        self._times_from_results()

    def _times_from_results(self) -> None:
        """Winners' times from the results (a late joiner never saw their last move), or
        mid-race from their last split: the move that put the last card up."""
        for winner in self.racers.values():
            last = winner.splits[-1] if winner.splits else None
            if winner.won and isinstance(last, int | float) and self.start_at is not None:
                winner.finished_at = self.start_at + last
        for row in self.results:
            racer = self.racers.get(row.get("seat", -1))
            time = row.get("time")
            if racer is not None and isinstance(time, int | float) and self.start_at is not None:
                racer.finished_at = self.start_at + time

    def _load_own_board(self, board: Mapping[str, Any], moves: list[str]) -> None:
        self.board = dict(board)
        self.engine = None
        if self.seed is not None and self.game and self.game != "moojub":
            engine = new_game(self.game, self.seed)
            try:
                for move in moves:
                    engine.undo() if move == "undo" else engine.apply(move)
            except IllegalMove:
                engine = visible_game(board)
            self.engine = engine
        else:
            self.engine = visible_game(board)

    def _on_PlayerJoined(self, msg: PlayerJoined) -> None:
        self.racers[msg.seat] = Racer(seat=msg.seat, name=msg.name, bot=msg.bot)

    def _on_PlayerLeft(self, msg: PlayerLeft) -> None:
        self.racers.pop(msg.seat, None)

    def _on_PlayerReady(self, msg: PlayerReady) -> None:
        if msg.seat in self.racers:
            self.racers[msg.seat].ready = msg.ready

    def _on_Presence(self, msg: Presence) -> None:
        if msg.seat in self.racers:
            self.racers[msg.seat].connected = msg.connected
            self.racers[msg.seat].grace_until = None if msg.connected else msg.grace_until

    def _on_Countdown(self, msg: Countdown) -> None:
        self.phase = "countdown"
        self.start_at = msg.start_at

    def _on_RaceStarted(self, msg: RaceStarted) -> None:
        self.phase = "running"
        self.game = msg.game
        self.seed = msg.seed
        self.start_at = msg.at
        self.ends_at = msg.ends_at
        self.finished_at = None
        for racer in self.racers.values():
            racer.progress = racer.moves = 0
            racer.won = racer.stuck = False
            racer.out = None
            racer.finished_at = None
        if self.role != "player":
            start = self._start_board(msg)
            self.boards = {seat: dict(start) for seat in self.racers} if start else {}
            self.board_engines = {}
            if msg.seed is not None:
                self.board_engines = {s: new_game(msg.game, msg.seed) for s in self.racers}
            return
        if msg.seed is not None:
            self.engine = new_game(msg.game, msg.seed)
            self.board = self.engine.state(view="player")
        elif msg.board is not None:
            self.board = dict(msg.board)
            self.engine = visible_game(msg.board)

    def _start_board(self, msg: RaceStarted) -> dict[str, Any] | None:
        if msg.board is not None:
            return dict(msg.board)
        if msg.seed is not None:
            return new_game(msg.game, msg.seed).state(view="player")
        return None

    def _on_Accepted(self, msg: Accepted) -> None:
        self._own_move(msg.move, msg.moves, msg.board)
        me = self.me
        if me is not None:
            me.progress, me.moves, me.won, me.stuck = msg.progress, msg.moves, msg.won, msg.stuck

    def _own_move(self, move: str, count: int, board: dict[str, Any] | None) -> None:
        """Apply one of the player's own moves once (Accepted and Progress both carry it)."""
        if board is not None:
            self.board = dict(board)
            self.engine = visible_game(board)
            return
        engine = self.engine
        if engine is None or count <= engine.moves:
            return
        if move == "deal" and self.seed is None:
            # Another window of this seat dealt: the cards it turned are not known here
            # (the talon is secret), so ask for the seat's true board.
            self.gap = True
            return
        try:
            engine.undo() if move == "undo" else engine.apply(move)
        except IllegalMove:
            self.gap = True  # out of step with the server: a snapshot puts it right
            return
        self.board = engine.state(view="player")
        if engine.moves != count:
            self.gap = True

    def _on_Progress(self, msg: Progress) -> None:
        racer = self.racers.get(msg.seat)
        if racer is not None:
            racer.progress, racer.moves = msg.progress, msg.moves
            racer.won, racer.stuck = msg.won, msg.stuck
            if msg.splits is not None:
                racer.splits = list(msg.splits)
            if msg.won or msg.stuck:
                racer.finished_at = msg.at
        if msg.seat == self.seat and self.role == "player":
            if msg.move is not None:
                self._own_move(msg.move, msg.moves, None)
            return
        if msg.board is not None:
            self.boards[msg.seat] = dict(msg.board)
        elif msg.move is not None and msg.seat in self.boards:
            self._spectated_move(msg.seat, msg.move)

    def _spectated_move(self, seat: int, move: str) -> None:
        try:
            engine = self.board_engines.get(seat) or visible_game(self.boards[seat])
            self.board_engines[seat] = engine
            engine.undo() if move == "undo" else engine.apply(move)
        except (IllegalMove, ValueError):
            self.board_engines.pop(seat, None)
            self.gap = True  # e.g. an undo on a board joined mid-race: ask for a snapshot
            return
        self.boards[seat] = engine.state(view="player")

    def _on_PlayerOut(self, msg: PlayerOut) -> None:
        if msg.seat in self.racers:
            self.racers[msg.seat].out = msg.reason
            self.racers[msg.seat].finished_at = msg.at

    def _on_RaceFinished(self, msg: RaceFinished) -> None:
        self.phase = "finished"
        self.finished_at = msg.at
        self.results = [dict(r) for r in msg.results]
        self._times_from_results()
        self.seed = msg.seed
        self.finish_reason = msg.reason

    def _on_RematchVote(self, msg: RematchVote) -> None:
        if msg.seat in self.racers:
            self.racers[msg.seat].rematch = True

    def _on_NewRound(self, msg: NewRound) -> None:
        """Everyone voted: the same players, a new deal; nothing of the last round stays."""
        # A win of one's own on record, faster than one's best, is one's best in the rounds
        # after it: their deltas are to it, as the welcome after a reconnect would say.
        mine = next((r for r in self.results if r.get("seat") == self.seat), None)
        if mine and mine.get("won") and mine.get("player") and not mine.get("bot"):
            best_time = self.best[-1] if self.best else None
            if best_time is None or mine["time"] < best_time:
                self.best = tuple(mine["splits"])
        self.phase = "lobby"
        self.round = msg.round
        self.results = []
        self.finish_reason = ""
        self.seed = None
        self.start_at = self.ends_at = self.finished_at = None
        self.board = None
        self.engine = None
        self.boards = {}
        self.board_engines = {}
        for racer in self.racers.values():
            racer.new_round()
