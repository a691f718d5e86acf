"""A ghost race's recorded run, from the finished race it comes from (POST /rooms with
`ghost`: docs/protocol.md "Ghost races")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.replay import ReplayError, verify
from protocol import ErrorCode
from server.room.ghost import best_seat, ghost_name, steps_of
from server.room.ids import room_key
from server.room.race import RaceError
from server.storage.store import RoomStore
from server.tournament.rooms import StoreRooms

__all__ = ["GhostRun", "GhostUnavailable", "ghost_run"]


class GhostUnavailable(Exception):
    def __init__(self, status: int, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass(frozen=True, slots=True)
class GhostRun:
    source: str  # the race it comes from (a room's id)
    game: str
    seed: int
    name: str
    steps: list[list[Any]]


async def ghost_run(store: RoomStore, body: dict[str, Any]) -> GhostRun:
    """The run `body["ghost"]` (a finished room) names, of seat `body["ghost_seat"]` (by
    default its fastest winner, else its furthest racer)."""
    source = body.get("ghost")
    if not isinstance(source, str) or not source:
        raise GhostUnavailable(400, ErrorCode.BAD_REQUEST, "ghost must be a finished room's id")
    room = room_key(source)
    try:
        record = await StoreRooms(store).record(room)
    except RaceError:
        raise GhostUnavailable(404, ErrorCode.UNKNOWN_ROOM, f"no room {source!r}") from None
    if record is None:
        raise GhostUnavailable(409, ErrorCode.NOT_FINISHED, "that race has not finished")
    try:
        replay = verify(record.replay())
    except ReplayError as err:
        raise GhostUnavailable(
            500, ErrorCode.INTERNAL, f"its replay does not check: {err}"
        ) from None
    seats = [int(player["seat"]) for player in replay.header["players"]]
    seat = body.get("ghost_seat", best_seat(replay))
    if isinstance(seat, bool) or not isinstance(seat, int) or seat not in seats:
        raise GhostUnavailable(
            400, ErrorCode.BAD_REQUEST, f"ghost_seat must be one of {seats} (that race's seats)"
        )
    return GhostRun(
        source=room,
        game=str(replay.header["game"]),
        seed=int(replay.header["seed"]),
        name=ghost_name(replay, seat),
        steps=steps_of(replay, seat),
    )
