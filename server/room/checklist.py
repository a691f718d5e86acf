"""The one checklist a move goes through, and the one enum of its verdicts.

Redis is the final authority: `server/storage/lua/move.lua` runs the checklist atomically on the
stored race and accepts the move or names the first check it failed. The same enum's
values are given to the script (`lua_prelude`: a table `V` of them, prepended to the
script's source when it is loaded), so Python and Lua cannot drift apart on a name; the
parity test (tests/server/room/test_checklist.py) runs the same cases through both.

`prefilter` is the same checklist, in the same order, run on this process's mirror of the
race before the engine sees the move: it saves a Redis round trip for a move that cannot
be accepted (a spectator, a finished race, a stale seq). It may be behind the truth (a
seat taken a moment ago in another process): what it passes, the script still judges.

The order (boardgame.io's Master): the socket's token holds the seat; a re-sent seq gets
its first answer; the race is running at `now` (this round, started, not timed out); the
player is still racing; the seq is above the last accepted one; the board is the one the
move was judged on (another socket of the seat did not move first).
"""

from __future__ import annotations

import enum

from protocol import ErrorCode
from server.room.race import Race, Status

__all__ = ["LUA_VERDICTS", "REFUSALS", "Verdict", "lua_prelude", "prefilter"]


class Verdict(enum.StrEnum):
    OK = "ok"
    SEAT = "seat"  # the token does not hold the seat (given up, taken by another)
    DUP = "dup"  # a re-sent seq: the stored answer goes back
    CLOSED = "closed"  # not running: before the start, after the end, another round
    OUT = "out"  # the player has won, resigned or forfeited
    STALE = "stale"  # seq at or below the last accepted one
    COUNT = "count"  # the seat's board moved since (another socket): judge again
    UNAVAILABLE = "unavailable"  # Python only: Redis did not answer; nothing changed


LUA_VERDICTS = tuple(v for v in Verdict if v is not Verdict.UNAVAILABLE)

# What a client is told for each refusing verdict (DUP and COUNT are not refusals).
REFUSALS: dict[Verdict, tuple[ErrorCode, str]] = {
    Verdict.SEAT: (ErrorCode.NOT_JOINED, "this socket holds no seat here: join again"),
    Verdict.CLOSED: (ErrorCode.NOT_RUNNING, "the race is not running"),
    Verdict.OUT: (ErrorCode.PLAYER_OUT, "you are no longer racing"),
    Verdict.STALE: (ErrorCode.STALE_SEQ, "that seq is not above your last accepted one"),
    Verdict.UNAVAILABLE: (
        ErrorCode.UNAVAILABLE,
        "the server could not reach its storage: nothing changed, send the same move again",
    ),
}


def lua_prelude() -> str:
    """`local V = {OK='ok', ...}`: the verdicts as the scripts name them."""
    pairs = ", ".join(f"{v.name}='{v.value}'" for v in LUA_VERDICTS)
    return f"local V = {{{pairs}}}\n"


def prefilter(
    race: Race, seat: int | None, token_hash: str | None, seq: int, last_seq: int, now: float
) -> Verdict:
    """The checklist on this process's mirror (see the module's docstring); DUP when the
    seq is not above `last_seq` (the caller looks up its stored answer, else STALE)."""
    player = race.seats.get(seat) if seat is not None else None
    if player is None or token_hash is None or player.token_hash != token_hash:
        return Verdict.SEAT
    if seq <= last_seq:
        return Verdict.DUP
    started = race.status is Status.RUNNING or (
        race.status is Status.COUNTDOWN and race.start_at is not None and now >= race.start_at
    )
    if not started or (race.ends_at is not None and now >= race.ends_at):
        return Verdict.CLOSED
    if player.won or player.out is not None:
        return Verdict.OUT
    return Verdict.OK
