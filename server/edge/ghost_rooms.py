"""A ghost race's recorded run, from the replay of the finished race it comes from (POST
/rooms with `ghost`: docs/protocol.md "Ghost races")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.replay import ReplayError, verify
from protocol import ErrorCode
from server.room.ghost import best_seat, ghost_name, steps_of

__all__ = ["GhostRun", "GhostUnavailable", "deal_of", "ghost_run", "ghost_source"]


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
    daily_deal: str | None = None  # the daily deal it was played on ("DATE GAME"), if any


def deal_of(header: dict[str, Any]) -> str | None:
    """The daily deal ("DATE GAME") a replay's race was played on, if any: a daily
    attempt's (`daily`) or another race's on that deal (`daily_deal`)."""
    deal = header.get("daily") or header.get("daily_deal")
    return deal if isinstance(deal, str) else None


def ghost_source(body: dict[str, Any]) -> str:
    """The race `body["ghost"]` names: a room's id (its latest finished race) or an archived
    race's id ("ROOM.ROUND")."""
    source = body.get("ghost")
    if not isinstance(source, str) or not source or len(source) > 100:
        raise GhostUnavailable(
            400,
            ErrorCode.BAD_REQUEST,
            "ghost must be a finished race's id (a room's or ROOM.ROUND)",
        )
    return source.lower()


def ghost_run(source: str, text: str, body: dict[str, Any]) -> GhostRun:
    """The run of seat `body["ghost_seat"]` (by default the fastest winner, else the
    furthest racer) of the race whose replay is `text`."""
    try:
        replay = verify(text)
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
        source=source,
        game=str(replay.header["game"]),
        seed=int(replay.header["seed"]),
        name=ghost_name(replay, seat),
        steps=steps_of(replay, seat),
        daily_deal=deal_of(replay.header),  # the same deal: closed as its source was
    )
