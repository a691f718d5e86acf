"""The bytes of a room's moves and events in Redis, both ways, without I/O.

What the move script is called with (`move_call`: its keys and arguments), an event as
logged and published ("VERSION|msgpack body", the script writes the version) and read
back (`parse_entry_wire`), and the answer to a move built from its event (`answer_to`),
or from what the seq hash keeps (`stored_answer_of`). Every accepted move passes here
several times, so the compiled build of the move path compiles this module
(core/build.py); its source is the reference and runs where no C compiler is. Rooms live
across a deploy: what this writes stays byte for byte what it was
(tests/server/storage/test_codec.py).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import msgpack

import protocol as p
from server.redis_io.resp_encode import Arg
from server.storage.keys import room_keys

__all__ = [
    "MoveWrite",
    "answer_to",
    "entry_body",
    "millis",
    "move_call",
    "parse_entry",
    "parse_entry_wire",
    "stored_answer_of",
]

# One packer reused: msgpack.packb builds a Packer per call (same options, same bytes).
_packer = msgpack.Packer(use_bin_type=True)


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ is slow, once per move
class MoveWrite:
    room: str
    round: int
    seat: int
    seq: int
    expected: int  # accepted moves before this one
    move: str  # canonical, or "undo"
    now: float
    event: p.Progress  # version 0: given by the script; the answer is built from it
    done_at: float | None
    token_hash: str  # the mover's token: the script checks it still holds the seat
    # The seat's splits after this move (core/splits.py); none reached when left out.
    splits: list[float | None] = dataclasses.field(default_factory=lambda: [None] * 4)


def millis(t: float | None) -> str:
    """A time as the scripts keep it: whole milliseconds, "" for none (or never)."""
    return "" if t is None or math.isinf(t) else str(round(t * 1000))


def entry_body(event: p.Event) -> bytes:
    """An event as logged, without its version (the script puts "VERSION|" in front)."""
    wire = p.to_wire(event)
    del wire["version"]
    return p.pack_map(wire)


def parse_entry(entry: bytes) -> p.Event | None:
    """A logged or published "VERSION|body" back into its Event (None if damaged)."""
    parsed = parse_entry_wire(entry)
    return None if parsed is None else parsed[0]


def parse_entry_wire(entry: bytes) -> tuple[p.Event, dict[str, Any]] | None:
    """As parse_entry, with the event's wire map (equal to `p.to_wire(event)`, same key
    order), so that the fan-out need not build it again."""
    version, _, body = entry.partition(b"|")
    try:
        body_wire = msgpack.unpackb(body, raw=False)
        wire = {"type": body_wire["type"], "v": body_wire["v"], "version": int(version)}
        wire.update(body_wire)  # keys already present keep their place: to_wire's order
    except Exception:
        return None
    event = p.SERVER_TO_CLIENT.build_trusted(wire)
    return (event, wire) if isinstance(event, p.Event) else None


def move_call(
    write: MoveWrite, event_log: int, ttl: float
) -> tuple[tuple[str, ...], tuple[Arg, ...], tuple[Arg, ...]]:
    """move.lua's keys, its arguments for this move, and its arguments that are the same
    for every move of the seat (encoded once: server/redis_io/resp_encode.py's
    encode_fcall)."""
    keys = room_keys(write.room)
    event = write.event
    prog = _packer.pack(
        [event.progress, event.moves, event.won, event.stuck, write.done_at, write.splits]
    )
    args: tuple[Arg, ...] = (
        write.seq,
        write.expected,
        write.move,
        millis(write.now),
        write.round,
        entry_body(event),
        prog,
        write.token_hash,
    )
    fixed: tuple[Arg, ...] = (write.seat, event_log, keys.channel, round(ttl * 1000))
    return keys.move_keys(write.seat), args, fixed


def stored_answer_of(raw: bytes, seq: int) -> p.Accepted | None:
    """The answer to move `seq` from what its seq hash keeps: "VERSION|event body"."""
    event = parse_entry(raw)
    if not isinstance(event, p.Progress):
        return None
    return answer_to(seq, event, event.version)


def answer_to(seq: int, event: p.Progress, version: int) -> p.Accepted | None:
    """The answer to move `seq`, whose event is `event` (a move's event names its move)."""
    if event.move is None:
        return None
    return p.Accepted(
        seq=seq,
        move=event.move,
        progress=event.progress,
        moves=event.moves,
        won=event.won,
        stuck=event.stuck,
        version=version,
    )
