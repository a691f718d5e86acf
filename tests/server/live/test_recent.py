"""A room's recent events are kept as their logged bytes (server/live/recent.py)."""

import gc

import protocol as p
from server.live.recent import RecentEvents, entry_of


def progress(version: int) -> p.Progress:
    return p.Progress(
        version=version, at=1.5, seat=version % 3, progress=version, moves=version,
        won=False, stuck=False, move="t0f1",
    )  # fmt: skip


def test_events_come_back_equal_between_versions_and_the_oldest_go() -> None:
    recent = RecentEvents(4)
    assert not recent and recent.first_version() is None and recent.events() == []
    events = [progress(v) for v in range(1, 7)]
    for event in events:
        recent.append(entry_of(event))
    assert recent.first_version() == 3  # only the last 4 are kept
    assert recent.events() == events[2:]
    assert recent.between(3, 5) == events[3:5]
    assert recent.between(6, 9) == []
    recent.clear()
    assert not recent


def test_what_is_kept_is_not_tracked_by_the_garbage_collector() -> None:
    """Event objects kept per room were most of what each young collection scanned."""
    recent = RecentEvents(4)
    recent.append(entry_of(progress(1)))
    assert not any(gc.is_tracked(entry) for entry in recent._entries)
