"""One INFO line per room created, started and finished, for operators.

Called where a room's state is written (server/storage/store.py), so each line comes from the one
process that made the change, whichever process serves the room's players.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import protocol as p
from server.room.race import Race

__all__ = ["log_created", "log_events"]

log = logging.getLogger("solrace.rooms")


def log_created(race: Race) -> None:
    config = race.config
    log.info(
        "room %s created: %s, %d seats, seed %s (%s)",
        race.room,
        config.game,
        config.seats,
        race.seed,
        config.seed_mode,
    )


def log_events(race: Race, events: Iterable[p.Event]) -> None:
    for event in events:
        if isinstance(event, p.RaceStarted):
            log.info("room %s started: %s, %d racers", race.room, event.game, len(race.seats))
        elif isinstance(event, p.RaceFinished):
            winners = [str(row.get("name")) for row in event.results if row.get("won")]
            log.info(
                "room %s finished (%s): %d racers, won by %s",
                race.room,
                event.reason,
                len(event.results),
                ", ".join(winners) or "nobody",
            )
