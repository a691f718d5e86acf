"""A room's last events in memory, for sockets that attach mid-stream.

Kept as the bytes the room's log holds ("VERSION|body", server/storage/store.py), and parsed only
when a socket asks for them (rarely): as event objects, the last 256 events of 125 busy
rooms were 32,000 of the 50,000-93,000 objects every young garbage collection scanned,
8-43 ms pauses of the event loop at an everyday rate (docs/performance.md).
Bytes are not tracked by the collector.
"""

from __future__ import annotations

import collections

import protocol as p
from server.storage.codec import entry_body, parse_entry

__all__ = ["RecentEvents", "entry_of"]


def entry_of(event: p.Event) -> bytes:
    """An event (with its version) as the room's log holds it."""
    return b"%d|%b" % (event.version, entry_body(event))


def _version(entry: bytes) -> int:
    return int(entry.partition(b"|")[0])


class RecentEvents:
    def __init__(self, size: int) -> None:
        self._entries: collections.deque[bytes] = collections.deque(maxlen=size)

    def __bool__(self) -> bool:
        return bool(self._entries)

    def append(self, entry: bytes) -> None:
        """The next event, as logged (`entry_of`, or as pub/sub delivered it)."""
        self._entries.append(entry)

    def clear(self) -> None:
        self._entries.clear()

    def first_version(self) -> int | None:
        return _version(self._entries[0]) if self._entries else None

    def between(self, since: int, until: int) -> list[p.Event]:
        """The events after version `since` up to `until`, oldest first."""
        events = []
        for entry in self._entries:
            if since < _version(entry) <= until:
                event = parse_entry(entry)
                if event is not None:
                    events.append(event)
        return events

    def events(self) -> list[p.Event]:
        return self.between(-1, 1 << 62)
