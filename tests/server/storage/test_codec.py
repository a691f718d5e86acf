"""The bytes of a room's moves and events in Redis (server/storage/codec.py), on either
build of the move path. Rooms live across a deploy: the move script's call and the logged
entries are pinned byte for byte."""

from __future__ import annotations

import dataclasses

import protocol as p
from server.redis_io.resp_encode import encode_fcall
from server.storage.codec import (
    MoveWrite,
    answer_to,
    entry_body,
    millis,
    move_call,
    parse_entry,
    parse_entry_wire,
    stored_answer_of,
)

FUNCTION = "solrace_move_0123456789abcdef"
SPLITS: list[float | None] = [12.5, None, None, None]
MOVE_EVENT = p.Progress(
    version=0,
    at=1700000000.25,
    seat=2,
    progress=17,
    moves=41,
    won=False,
    stuck=False,
    move="t5 t2 3",
    splits=SPLITS,
)
MOVE_BODY = (
    b"\x8a\xa4type\xa8progress\xa1v\x01\xa2at\xcbA\xd9T\xfc@\x10\x00\x00\xa4seat\x02"
    b"\xa8progress\x11\xa5moves)\xa3won\xc2\xa5stuck\xc2\xa4move\xa7t5 t2 3"
    b"\xa6splits\x94\xcb@)\x00\x00\x00\x00\x00\x00\xc0\xc0\xc0"
)


def test_a_move_script_call_is_the_same_bytes_as_ever() -> None:
    write = MoveWrite(
        "r00m", 3, 2, 44, 40, "t5 t2 3", 1700000000.2504, MOVE_EVENT, None, "ab" * 32, SPLITS
    )
    keys, args, fixed = move_call(write, 512, 3600.0)
    assert keys == (
        "{room:r00m}:meta",
        "{room:r00m}:moves:2",
        "{room:r00m}:seq:2",
        "{room:r00m}:log",
    )
    assert args == (
        44,
        40,
        "t5 t2 3",
        "1700000000250",
        3,
        MOVE_BODY,
        b"\x96\x11)\xc2\xc2\xc0\x94\xcb@)\x00\x00\x00\x00\x00\x00\xc0\xc0\xc0",
        "ab" * 32,
    )
    assert fixed == (2, 512, "{room:r00m}:events", 3600000)
    assert encode_fcall(FUNCTION, keys, args, fixed) == (
        b"*19\r\n$5\r\nFCALL\r\n$29\r\n" + FUNCTION.encode() + b"\r\n$1\r\n4\r\n"
        b"$16\r\n{room:r00m}:meta\r\n$19\r\n{room:r00m}:moves:2\r\n$17\r\n{room:r00m}:seq:2\r\n"
        b"$15\r\n{room:r00m}:log\r\n$1\r\n2\r\n$3\r\n512\r\n$18\r\n{room:r00m}:events\r\n"
        b"$7\r\n3600000\r\n$2\r\n44\r\n$2\r\n40\r\n$7\r\nt5 t2 3\r\n$13\r\n1700000000250\r\n"
        b"$1\r\n3\r\n$98\r\n" + MOVE_BODY + b"\r\n$19\r\n"
        b"\x96\x11)\xc2\xc2\xc0\x94\xcb@)\x00\x00\x00\x00\x00\x00\xc0\xc0\xc0\r\n"
        b"$64\r\n" + b"ab" * 32 + b"\r\n"
    )


def test_a_winning_undo_keeps_its_finish_time_and_default_splits() -> None:
    event = p.Progress(
        version=0,
        at=1700000100.5,
        seat=0,
        progress=52,
        moves=90,
        won=True,
        stuck=False,
        move="undo",
    )
    write = MoveWrite("x", 1, 0, 9, 89, "undo", 1700000100.5, event, 1700000100.5, "h")
    _, args, fixed = move_call(write, 64, 86400.0)
    assert args[3] == "1700000100500"
    assert args[5] == (
        b"\x89\xa4type\xa8progress\xa1v\x01\xa2at\xcbA\xd9T\xfcY \x00\x00\xa4seat\x00"
        b"\xa8progress4\xa5movesZ\xa3won\xc3\xa5stuck\xc2\xa4move\xa4undo"
    )
    assert args[6] == b"\x964Z\xc3\xc2\xcbA\xd9T\xfcY \x00\x00\x94\xc0\xc0\xc0\xc0"
    assert fixed == (0, 64, "{room:x}:events", 86400000)


def test_times_are_whole_milliseconds_and_none_or_never_is_empty() -> None:
    assert [millis(t) for t in (None, float("inf"), 0.0, 1.2345, 1700000000.2504)] == [
        "",
        "",
        "0",
        "1234",
        "1700000000250",
    ]


def test_an_entry_parses_back_into_its_event_and_wire_map_in_to_wire_order() -> None:
    parsed = parse_entry_wire(b"77|" + MOVE_BODY)
    assert parsed is not None
    event, wire = parsed
    assert event == dataclasses.replace(MOVE_EVENT, version=77)
    assert list(wire.items()) == list(p.to_wire(event).items())
    assert p.pack_map(wire) == p.encode_msgpack(event)
    assert entry_body(event) == MOVE_BODY
    assert parse_entry(b"77|" + MOVE_BODY) == event


def test_a_damaged_entry_is_none() -> None:
    for entry in (b"7|not msgpack", b"x|" + MOVE_BODY, b"7|\x90", b"7|\x81\xa1a\x01", b""):
        assert parse_entry_wire(entry) is None
        assert parse_entry(entry) is None
    ok = entry_body(
        p.Accepted(seq=1, move="m", progress=1, moves=1, won=False, stuck=False, version=1)
    )
    assert parse_entry(b"3|" + ok) is None  # an answer is not an event


def test_the_answer_to_a_move_and_its_resend_are_the_same() -> None:
    answer = answer_to(44, MOVE_EVENT, 77)
    assert answer == p.Accepted(
        seq=44, move="t5 t2 3", progress=17, moves=41, won=False, stuck=False, version=77
    )
    assert stored_answer_of(b"77|" + MOVE_BODY, 44) == answer
    assert stored_answer_of(b"77|damaged", 44) is None
    no_move = p.Progress(version=0, at=1.0, seat=1, progress=0, moves=0, won=False, stuck=False)
    assert answer_to(1, no_move, 2) is None
    assert stored_answer_of(b"2|" + entry_body(no_move), 1) is None
