"""Which race the TV page shows: the closest one running now (a pure choice over ROOM views).

"Closest" is the race whose two leaders are nearest in cards put up: a tie for first is
the best show. Among equally close races the one further along wins (the end is near),
then the one that started last. A race with one racer only is shown when nothing else runs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["closeness", "closest_race"]


def closeness(room: dict[str, Any]) -> tuple[int, int, int, float]:
    """A sort key, smaller is closer: (lonely, gap between the two leaders, -their progress,
    -start time). Players who are out still count: their progress is on the board."""
    progress = sorted((int(p.get("progress") or 0) for p in room.get("players", [])), reverse=True)
    lonely = 0 if len(progress) >= 2 else 1
    gap = progress[0] - progress[1] if len(progress) >= 2 else 0
    leaders = sum(progress[:2])
    return (lonely, gap, -leaders, -float(room.get("start_at") or 0.0))


def closest_race(rooms: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The running room to show, or None when no race is running."""
    running = [room for room in rooms if room.get("status") == "running" and room.get("players")]
    if not running:
        return None
    return min(running, key=closeness)
