"""What a tournament is made of: its settings, players, heats (its races) and Knockout
matches, and the refusal every request may get. Plain data; server/tournament/machine.py
changes it, server/tournament/formats.py holds what each format does with it."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from protocol import ErrorCode
from server.tournament.scoring import RaceResult

__all__ = ["Heat", "Match", "Player", "Status", "TourConfig", "TourError"]


class TourError(Exception):
    """A request the tournament refuses; nothing changed."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Status(enum.StrEnum):
    REGISTRATION = "registration"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class TourConfig:
    """What the organiser chose; fixed once the tournament is created."""

    name: str
    format: str = "rounds"
    games: tuple[str, ...] = ("shaula",)  # played in turn: round (or heat) k deals games[k]
    rounds: int = 3  # Rounds format
    duration: float = 600.0  # Arena: seconds from the start in which heats are paired
    time_limit: float = 300.0  # seconds per race
    winnable: bool = True  # deals proved winnable by the solver
    spectator_delay: float = 10.0
    max_players: int = 64
    seats: int = 8  # most racers in one room (a heat)
    arena_heat: int = 4  # Arena: players per heat when enough are free (2..seats)
    wave: float = 5.0  # Arena: seconds between pairings of the free players
    pause: float = 30.0  # Rounds, Knockout: the break between rounds
    countdown: float = 5.0  # a heat's room counts down this long before its race
    grace: float = 60.0  # a racer whose connection drops keeps their seat this long
    rated: bool = True  # its races move the players' ratings (records/ratings.py)
    seeding: str = "registration"  # Knockout's bracket: by "registration" order or "rating"


@dataclass(slots=True)
class Player:
    id: int
    name: str
    token_hash: str
    registered_at: float
    withdrawn: bool = False
    removed: bool = False
    out_round: int | None = None  # Knockout: the round they lost (None: still in)
    # Whose registration it is: the player's id (None: registered with no identity),
    # whether they are a bot, and their rating (in the tournament's first game) when they
    # registered: seeds a Knockout by rating, shown in the standings (with whether it was
    # provisional then).
    account: str | None = None
    bot: bool = False
    rating: int | None = None
    provisional: bool = False

    @property
    def active(self) -> bool:
        return not self.withdrawn and not self.removed


@dataclass(frozen=True, slots=True)
class Entrant:
    """A player registering with their key (docs/protocol.md section 11): their id, whether
    they are a bot, and their rating in the tournament's first game now (a Player keeps
    them)."""

    account: str
    bot: bool = False
    rating: int | None = None
    provisional: bool = False


@dataclass(slots=True)
class Heat:
    """One race of the tournament: a room with these players on this deal."""

    id: int  # 0, 1, 2 ... in the order they were opened; the room is f"{tour}-{id}"
    round: int  # Rounds/Knockout: its round; Arena: its wave
    game: str
    seed: int
    players: list[int]
    opened_at: float
    match: int | None = None  # Knockout: the match it decides
    opened: bool = False  # its room exists (players are sent there only then)
    results: list[RaceResult] | None = None  # None while it is raced

    @property
    def live(self) -> bool:
        return self.results is None


@dataclass(slots=True)
class Match:
    """Knockout: two players (or one, a bye), in `round` at `slot` of the bracket."""

    id: int
    round: int
    slot: int
    a: int | None
    b: int | None
    winner: int | None = None  # None once settled: nobody goes through (both withdrew)
    how: str | None = None  # "race", "bye", "walkover"; None while undecided

    @property
    def settled(self) -> bool:
        return self.how is not None
