"""Every Redis key and channel the race server uses, named in one place.

Per room, every key carries the Cluster hash tag `{room:ID}` (a room's keys live on one
node, so one script can touch them all):

    {room:ID}:race       the Race (server/room/race.py) as JSON
    {room:ID}:meta       hash: rev (race writes), ver (last event version), copies of
                         status, round, start_at, ends_at, and per seat out:SEAT (why it
                         stopped racing) and tok:SEAT (its token's hash) that the move
                         script checks; per seat, written by the move script: n:SEAT
                         (moves accepted this round), p:SEAT (msgpack [progress, moves,
                         won, stuck, done_at, splits]) and q:SEAT (its highest accepted
                         seq); and `table`, 65 bytes that keep the hash a hash table
                         (transition.lua says why)
    {room:ID}:log        list of at least the last `event_log` events (trimmed when an
                         eighth over), "VERSION|msgpack body"
    {room:ID}:moves:S    list of seat S's accepted moves, "MILLISECONDS MOVE" (undo included)
    {room:ID}:seq:S      hash: seq -> "VERSION|event body" of its move (the answer to a
                         re-send is built from it), and "last" (highest accepted seq, as
                         q:SEAT of meta; processes of the version before read it here)
    {room:ID}:ended      hash: the room's finished races not archived yet (the outbox):
                         ROUND -> the finished race as JSON, ROUND:S -> seat S's moves
                         ("MILLISECONDS MOVE" lines); written by the transition that ends
                         the race, emptied as each is archived; never expires
    channel {room:ID}:events   pub/sub: each event as it is logged

Global keys (no room tag; each is touched by one command on its own): `ROOMS` (zset of
room ids by creation time), `DEADLINES` (zset of room ids by their next deadline, swept by
every process), `quick_queue(GAME)` (quick-match queue), `process_key(PROCESS)` (a
process's heartbeat), `PROCESSES` (set of the processes that have beaten and are not yet
reaped), `process_rooms_key(PROCESS)` (set of the rooms where its sockets held seats),
`process_reaped_key(PROCESS)` (it was taken for dead: told at its next heartbeat),
`budget_key(BUDGET, WHO)` (a budget of attempts: rooms created by a client address,
sign-ins by an address or for a name), `OUTBOX` (zset of
the rooms with a race to archive, by when it ended; every process drains it,
server/edge/archiving.py), `outbox_claim_key(ROOM)` (which process is archiving the room's
races now: a short lease), `ticket_told_key(TICKET)` (a quick-match ticket's pairing, as
told on its channel, kept a while for a process that could not hear it then),
`quick_seat_key(PLAYER)` (where a player's latest quick match seated them), and the
channels `CONTROL`, `ticket_channel(TICKET)` and `LOBBY`
(every room transition: "REV|msgpack lobby entry", for the lobby feed,
server/live/lobby_live.py).

Tournaments (server/tournament/store.py), per tournament under the hash tag `{tour:ID}`:

    {tour:ID}            hash: state (the Tournament as JSON), rev (writes so far)
    {tour:ID}:replays    hash: heat id -> the heat's replay (NDJSON, core/replay.py)
    {tour:ID}:lock       which process is advancing the tournament now (a short lease)
    channel {tour:ID}:events   pub/sub: the new rev after each write

and globally `TOURS` (zset of tournament ids by creation time, the newest 1,000) and
`TOUR_DEADLINES` (zset of ids by when the tournament next needs a look: a round or wave
due, the end of an Arena, or a live heat to read; every process sweeps it).
"""

from __future__ import annotations

import functools

__all__ = [
    "CONTROL",
    "DEADLINES",
    "LOBBY",
    "OUTBOX",
    "PROCESSES",
    "ROOMS",
    "TOURS",
    "TOUR_DEADLINES",
    "RoomKeys",
    "TourKeys",
    "budget_key",
    "outbox_claim_key",
    "process_key",
    "process_reaped_key",
    "process_rooms_key",
    "quick_queue",
    "quick_seat_key",
    "room_keys",
    "ticket_channel",
    "ticket_told_key",
]

ROOMS = "solrace:rooms"
DEADLINES = "solrace:deadlines"
PROCESSES = "solrace:processes"  # set: every process that has beaten, until it is reaped
LOBBY = "solrace:lobby"  # channel: each room transition's lobby entry (server/live/lobby_live.py)
CONTROL = "solrace:control"  # always subscribed: redis-py's listener needs one channel
OUTBOX = "solrace:records:outbox"  # zset: rooms with a finished race to archive


def outbox_claim_key(room: str) -> str:
    """Which process archives the room's finished races now (a lease, RoomStore.claim_ended)."""
    return f"solrace:records:claim:{room}"


def quick_queue(game: str) -> str:
    return f"solrace:quick:{game}"


def ticket_channel(ticket: str) -> str:
    """Where a quick-match ticket ("ID|name") hears of its pairing."""
    return f"solrace:quick:ticket:{ticket.partition('|')[0]}"


def quick_seat_key(player: str) -> str:
    """Where a player's latest quick match seated them (kept as long as a told pairing)."""
    return f"solrace:quick:seat:{player}"


def ticket_told_key(ticket: str) -> str:
    """A quick-match ticket's pairing ("ID|name"), as told on `ticket_channel(ticket)`."""
    return f"solrace:quick:told:{ticket.partition('|')[0]}"


def budget_key(budget: str, who: str) -> str:
    """The state of `who`'s budget of attempts of a kind (RoomStore.take_budget)."""
    return f"solrace:budget:{budget}:{who}"


def process_key(process: str) -> str:
    """A server process's heartbeat: present while it lives (server/edge/sweeper.py)."""
    return f"solrace:process:{process}"


def process_reaped_key(process: str) -> str:
    """Present when the other processes took `process` for dead and let go of its sockets
    (it may only have stalled): its next heartbeat reads and clears it (server/edge/sweeper.py)."""
    return f"solrace:process:{process}:reaped"


def process_rooms_key(process: str) -> str:
    """Set of the rooms where a socket of `process` took or took back a seat (since the
    lobby TTL): the rooms to look at when the process dies (server/edge/sweeper.py's reaper)."""
    return f"solrace:process:{process}:rooms"


class RoomKeys:
    __slots__ = ("_move_keys", "channel", "ended", "log", "meta", "race", "tag")

    def __init__(self, room: str) -> None:
        self.tag = tag = f"{{room:{room}}}"
        self.meta = f"{tag}:meta"
        self.race = f"{tag}:race"
        self.log = f"{tag}:log"
        self.channel = f"{tag}:events"
        self.ended = f"{tag}:ended"
        self._move_keys: dict[int, tuple[str, ...]] = {}

    def moves(self, seat: int) -> str:
        return f"{self.tag}:moves:{seat}"

    def seq(self, seat: int) -> str:
        return f"{self.tag}:seq:{seat}"

    def move_keys(self, seat: int) -> tuple[str, ...]:
        """The keys of the move script for a seat (one tuple, reused: the batcher's
        encoding of them is cached by it)."""
        cached = self._move_keys.get(seat)
        if cached is None:
            cached = self._move_keys[seat] = (
                self.meta,
                self.moves(seat),
                self.seq(seat),
                self.log,
            )
        return cached

    def per_seat(self, seats: int) -> list[str]:
        return [k for s in range(seats) for k in (self.moves(s), self.seq(s))]


@functools.lru_cache(maxsize=4096)
def room_keys(room: str) -> RoomKeys:
    """The keys of a room, built once for its moves (RoomKeys is never changed)."""
    return RoomKeys(room)


TOURS = "solrace:tours"
TOUR_DEADLINES = "solrace:tour:deadlines"


class TourKeys:
    __slots__ = ("channel", "lock", "replays", "state")

    def __init__(self, tid: str) -> None:
        tag = f"{{tour:{tid}}}"
        self.state = tag
        self.replays = f"{tag}:replays"
        self.lock = f"{tag}:lock"
        self.channel = f"{tag}:events"
