"""The tournament's payloads (docs/protocol.md section 10): the TOURNAMENT object, a RACE,
a STANDING row per format and YOU. Maps on the wire (JSON over HTTP, the `tournament`
message over WebSocket); typed here so that the server and clients agree, as `RoomView` is
for rooms."""

from __future__ import annotations

from typing import TypedDict

__all__ = [
    "FORMATS",
    "ArenaStanding",
    "DealView",
    "KnockoutStanding",
    "MatchView",
    "RaceResultView",
    "RaceView",
    "RoundsStanding",
    "Standing",
    "StandingBase",
    "TourView",
    "YouView",
]

# The tournament formats, by the name `format` gives them (docs/tournaments.md).
FORMATS = ("rounds", "arena", "knockout")


class RaceResultView(TypedDict):
    """One racer's race, as its replay proves it (times in seconds since the start)."""

    player: int
    name: str
    seat: int
    won: bool
    time: float | None
    progress: int
    reached: float
    moves: int


class RaceView(TypedDict):
    """A race (heat) of the tournament (the RACE object): its deal once it has finished."""

    heat: int
    room: str
    round: int  # Rounds, Knockout: its round; Arena: its wave
    game: str
    seed: int | None
    players: list[str]
    live: bool
    match: int | None  # Knockout: the match it decides
    results: list[RaceResultView] | None


class DealView(TypedDict):
    """A finished Rounds round's deal."""

    round: int
    game: str
    seed: int


class MatchView(TypedDict):
    """Knockout: a match of the bracket, with player names."""

    id: int
    round: int
    slot: int
    a: str | None
    b: str | None
    winner: str | None
    how: str | None  # "race", "bye" or "walkover"; None while undecided


class TourView(TypedDict):
    """The TOURNAMENT object: its settings, where it is, its live races; no tokens."""

    id: str
    name: str
    format: str  # one of FORMATS
    games: list[str]
    rounds: int
    duration: float
    time_limit: float
    winnable: bool
    spectator_delay: float
    max_players: int
    seats: int
    arena_heat: int
    wave: float
    pause: float
    countdown: float
    grace: float
    rated: bool
    seeding: str  # Knockout's bracket: "registration" (order) or "rating"
    status: str  # "registration", "running" or "finished"
    round: int
    racing: bool
    paused: bool
    next_at: float | None
    created_at: float
    started_at: float | None
    ends_at: float | None
    finished_at: float | None
    players: int
    active: int
    live: list[RaceView]
    deals: list[DealView]
    matches: list[MatchView]
    champion: str | None


class StandingBase(TypedDict):
    """What every format's STANDING row has."""

    rank: int  # competition ranks (1, 2, 2, 4); removed players after everyone
    player: int
    name: str
    status: str  # "active", "withdrawn" or "removed"
    wins: int
    rating: int | None  # their rating in the tournament's first game when they registered
    provisional: bool  # that rating was provisional then (shown with "?")
    bot: bool


class RoundsStanding(StandingBase):
    points: float
    time: float  # total time of the rounds finished
    progress: int
    rounds: int  # rounds raced
    per_round: dict[str, float]  # round number -> points, for the rounds raced


class ArenaStanding(StandingBase):
    score: int
    heats: int
    progress: int
    streak: int  # heat wins in a row, now
    fire: bool  # the next heat scores double
    scores: list[int]  # per heat, in order


class KnockoutStanding(StandingBase):
    out_round: int | None  # the round lost (0: withdrawn before the draw); None while in


Standing = RoundsStanding | ArenaStanding | KnockoutStanding


class YouView(TypedDict):
    """A player's own line in the `tournament` message: their row and, while they have a
    race, its room and seat."""

    player: int
    name: str
    standing: Standing
    room: str | None
    seat: int | None
    out_round: int | None
