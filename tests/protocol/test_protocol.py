"""Round trips and garbage input for the wire protocol."""

import json
import typing
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import protocol as p

CLIENT_TO_SERVER_SAMPLES: list[p.Message] = [
    p.Identify(key="k3y"),
    p.Join(room="abc", name="ann", token="t0k", since=7),
    p.Join(room="abc"),
    p.Watch(room="abc", since=0),
    p.Move(seq=1, move="t5 t2 3"),
    p.Undo(seq=2),
    p.Hint(),
    p.Legal(),
    p.Ready(ready=False),
    p.Start(),
    p.Resign(),
    p.Rematch(),
    p.Leave(),
    p.QuickMatch(game="shaula", name="bo"),
    p.QuickCancel(),
    p.Ping(id=9),
    p.Resync(since=3),
    p.TourWatch(tournament="5be0c2d1", token="t", top=10, offset=20),
    p.TourUnwatch(),
    p.LobbyWatch(),
    p.LobbyUnwatch(),
]

SERVER_TO_CLIENT_SAMPLES: list[p.Message] = [
    p.Identified(player={"id": "a1b2", "name": "ann", "bot": False, "claimed": True}),
    p.Welcome(room="abc", role="player", server_time=1.5, seat=0, token="x"),
    p.Snapshot(version=3, room={"id": "abc"}, board={"piles": {"t1": ["AS"]}}, moves=["t1 f1"]),
    p.PlayerJoined(version=1, at=2.0, seat=1, name="bo"),
    p.PlayerJoined(version=1, at=2.0, seat=1, name="bot", player="c3d4", bot=True),
    p.PlayerLeft(version=1, at=2.0, seat=1),
    p.PlayerReady(version=1, at=2.0, seat=1, ready=True),
    p.Presence(version=1, at=2.0, seat=1, connected=False, grace_until=40.0),
    p.Countdown(version=1, at=2.0, start_at=5.0),
    p.RaceStarted(version=1, at=2.0, game="shaula", seed=617, ends_at=100.0),
    p.Progress(
        version=4, at=2.0, seat=0, progress=3, moves=5, won=False, stuck=False, move="t1 f1"
    ),
    p.PlayerOut(version=1, at=2.0, seat=1, reason="resigned"),
    p.RaceFinished(
        version=9, at=3.0, results=[{"seat": 0, "rank": 1}], seed=617, reason="all_done"
    ),
    p.RematchVote(version=1, at=2.0, seat=0),
    p.NewRound(version=1, at=2.0, round=2),
    p.Accepted(seq=1, move="t1 f1", progress=1, moves=1, won=False, stuck=False, version=5),
    p.Refused(seq=2, code="illegal_move", reason="8H does not go on 9D"),
    p.HintReply(move=None),
    p.LegalReply(moves=["t1 c1", "t4 f1"], safe=["t4 f1"]),
    p.Error(code="bad_token", message="no"),
    p.Error(code="bad_message", message="no", request="move", seq=4),
    p.Error(code="rate_limited", message="no", request="ping", id=2),
    p.Pong(id=1, server_time=3.25),
    p.Queued(game="moojub"),
    p.Unqueued(game="moojub"),
    p.Unqueued(),
    p.Matched(room="r", seat=1, token="t"),
    p.TourState(
        version=3,
        tournament={"id": "t", "status": "running"},
        standings=[{"rank": 1, "name": "ann"}],
        offset=0,
        total=1,
        you={"player": 0, "room": "t-0", "seat": 0},
    ),
    p.LobbyState(rooms=[{"id": "abc", "status": "lobby", "players": []}], limit=100),
    p.LobbyChanged(rooms=[], gone=["abc"]),
]


def test_every_message_type_has_a_sample() -> None:
    assert {type(m) for m in CLIENT_TO_SERVER_SAMPLES} == set(typing.get_args(p.ClientToServer))
    assert {type(m) for m in SERVER_TO_CLIENT_SAMPLES} == set(typing.get_args(p.ServerToClient))


@pytest.mark.parametrize("msg", CLIENT_TO_SERVER_SAMPLES, ids=lambda m: m.TYPE)
def test_client_in_round_trips(msg: p.Message) -> None:
    assert p.decode_msgpack(p.encode_msgpack(msg)) == msg
    assert p.decode_json(p.encode_json(msg)) == msg


@pytest.mark.parametrize("msg", SERVER_TO_CLIENT_SAMPLES, ids=lambda m: m.TYPE)
def test_client_out_round_trips(msg: p.Message) -> None:
    assert p.decode_msgpack(p.encode_msgpack(msg), p.SERVER_TO_CLIENT) == msg
    assert p.decode_json(p.encode_json(msg), p.SERVER_TO_CLIENT) == msg


def test_wire_form_has_type_and_version_and_omits_none() -> None:
    wire = msgpack.unpackb(p.encode_msgpack(p.Join(room="r", name="a")))
    assert wire == {"type": "join", "v": p.PROTOCOL_VERSION, "room": "r", "name": "a"}
    assert json.loads(p.encode_json(p.Ping(id=2))) == {"type": "ping", "v": 1, "id": 2}


def unexpected(data: Any) -> p.Unexpected:
    result = p.from_wire(data)
    assert isinstance(result, p.Unexpected), result
    return result


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ([1, 2], p.ErrorCode.BAD_FRAME),
        ({"v": 1}, p.ErrorCode.UNKNOWN_TYPE),
        ({"type": 3, "v": 1}, p.ErrorCode.UNKNOWN_TYPE),
        ({"type": "nope", "v": 1}, p.ErrorCode.UNKNOWN_TYPE),
        ({}, p.ErrorCode.BAD_VERSION),  # wrong both ways: the version is judged first
        ({"type": 3, "v": 2}, p.ErrorCode.BAD_VERSION),
        ({"type": "ping"}, p.ErrorCode.BAD_VERSION),
        ({"type": "ping", "v": 2}, p.ErrorCode.BAD_VERSION),
        ({"type": "ping", "v": True}, p.ErrorCode.BAD_VERSION),
        ({"type": "ping", "v": 1.0}, p.ErrorCode.BAD_VERSION),  # an integer, as seq must be
        ({"type": "move", "v": 1, "move": "t1 f1"}, p.ErrorCode.BAD_MESSAGE),
        ({"type": "move", "v": 1, "seq": "1", "move": "t1 f1"}, p.ErrorCode.BAD_MESSAGE),
        ({"type": "move", "v": 1, "seq": True, "move": "t1 f1"}, p.ErrorCode.BAD_MESSAGE),
        ({"type": "move", "v": 1, "seq": 1.0, "move": "t1 f1"}, p.ErrorCode.BAD_MESSAGE),
        ({"type": "move", "v": 1, "seq": 2**63, "move": "t1 f1"}, p.ErrorCode.BAD_MESSAGE),
        ({"type": "ping", "v": 1, "id": -(2**70)}, p.ErrorCode.BAD_MESSAGE),
        ({"type": "join", "v": 1, "room": ["x"]}, p.ErrorCode.BAD_MESSAGE),
        ({"type": "ready", "v": 1, "ready": 1}, p.ErrorCode.BAD_MESSAGE),
    ],
)
def test_bad_maps_become_unexpected(data: Any, code: p.ErrorCode) -> None:
    assert unexpected(data).code is code


def test_a_type_that_is_no_string_and_an_integer_beyond_64_bits_are_named_as_such() -> None:
    # The message tells a client author what to fix: "missing" for a type that is there
    # but no string, or "wrong type" for a whole number too big, sent them looking elsewhere.
    assert unexpected({"v": 1}).message == 'missing "type"'
    assert unexpected({"type": None, "v": 1}).message == 'missing "type"'
    assert unexpected({"type": 3, "v": 1}).message == '"type" must be a string, got 3'
    big = unexpected({"type": "move", "v": 1, "seq": 2**63, "move": "t1 f1"})
    assert big.code is p.ErrorCode.BAD_MESSAGE
    assert big.message == "move: field 'seq' is beyond 64 bits (-2**63 .. 2**63-1)"
    assert unexpected({"type": "move", "v": 1, "seq": "1", "move": "t1 f1"}).message == (
        "move: field 'seq' has the wrong type"
    )


def test_unknown_fields_are_ignored_and_missing_optional_take_defaults() -> None:
    assert p.from_wire({"type": "join", "v": 1, "room": "r", "extra": [1]}) == p.Join(room="r")


def test_unexpected_turns_into_an_error_message() -> None:
    err = unexpected({"type": "zzz", "v": 1}).to_error()
    assert err.code == "unknown_type" and "zzz" in err.message


@pytest.mark.parametrize(
    ("data", "kind", "seq", "id_"),
    [
        ({"type": "move", "v": 1, "seq": 3, "move": 5}, "move", 3, None),
        ({"type": "move", "v": 1, "seq": "3", "move": "t1 c1"}, "move", None, None),
        ({"type": "undo", "v": 1, "seq": 2**63}, "undo", None, None),
        ({"type": "ping", "v": 7, "id": 11}, "ping", None, 11),
        ({"type": "fly", "v": 1, "seq": 1}, "fly", 1, None),
        ({"type": "ready", "v": 1, "ready": 1, "seq": 2, "id": 3}, "ready", None, None),
        ({"type": "move", "v": 1, "seq": 2, "id": 3}, "move", 2, None),
        ({"type": "\udcff", "v": 1}, None, None, None),
        ({"type": "x" * 41, "v": 1}, None, None, None),
        ({"v": 1, "seq": 5}, None, None, None),
    ],
)
def test_an_error_names_the_request_it_answers(
    data: dict[str, Any], kind: str | None, seq: int | None, id_: int | None
) -> None:
    err = unexpected(data).to_error()
    assert (err.request, err.seq, err.id) == (kind, seq, id_)
    assert p.decode_json(p.encode_json(err), p.SERVER_TO_CLIENT) == err  # always sendable


def test_error_for_a_decoded_request() -> None:
    err = p.error_for(p.Undo(seq=8), "not_joined", "join first")
    assert (err.code, err.request, err.seq, err.id) == ("not_joined", "undo", 8, None)
    assert p.error_for(p.Ping(id=4), "internal", "x").id == 4
    assert p.error_for(None, "internal", "x") == p.Error(code="internal", message="x")
    # An older client's decoder ignores the new fields: a map without them is still an Error.
    assert p.from_wire({"type": "error", "v": 1, "code": "c", "message": "m"}, p.SERVER_TO_CLIENT)


@pytest.mark.parametrize(
    "frame",
    [b"", b"\xc1", b"\x93\x01\x02", b"\x81\x01\x02", b"\xdd\xff\xff\xff\xff", b"\x80\x80"],
)
def test_garbage_msgpack_is_a_bad_frame(frame: bytes) -> None:
    result = p.decode_msgpack(frame)
    assert isinstance(result, p.Unexpected)
    assert result.code in (p.ErrorCode.BAD_FRAME,)


@pytest.mark.parametrize("text", ["", "{", "[1]", "null", '"x"', "[" * 100_000, "\udcff"])
def test_garbage_json_is_a_bad_frame(text: str) -> None:
    result = p.decode_json(text)
    assert isinstance(result, p.Unexpected)
    assert result.code is p.ErrorCode.BAD_FRAME


def test_a_msgpack_map_whose_keys_are_not_strings_is_a_bad_frame_that_says_so() -> None:
    """A map with an integer key is a msgpack map all the same: "not a msgpack map" left
    its sender looking for what else was wrong."""
    frame = msgpack.packb({"type": "ping", "v": 1, 7: "x"})
    result = p.decode_msgpack(frame)
    assert isinstance(result, p.Unexpected)
    assert result.code is p.ErrorCode.BAD_FRAME and "string" in result.message, result


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_constant_json_does_not_have_is_a_bad_frame(constant: str) -> None:
    """RFC 8259 has no NaN or Infinity; Python's json reads them, and a ping carrying one
    in a field it ignores was answered, a `move` with one refused `bad_message`."""
    text = '{"type": "ping", "v": 1, "id": 3, "pad": ' + constant + "}"
    result = p.decode_json(text)
    assert isinstance(result, p.Unexpected)
    assert result.code is p.ErrorCode.BAD_FRAME and constant in result.message, result
    assert p.decode_json('{"type": "ping", "v": 1, "id": 3, "pad": 1e400}') == p.Ping(id=3)


@given(st.binary(max_size=200))
def test_decode_msgpack_never_raises(data: bytes) -> None:
    result = p.decode_msgpack(data)
    assert isinstance(result, p.Message | p.Unexpected)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)


@given(
    st.sampled_from(["join", "watch", "move", "undo", "ready", "quick", "ping", "resync", "x"]),
    st.dictionaries(
        st.sampled_from(["room", "seq", "move", "since", "ready", "game", "token"]), json_values
    ),
)
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
def test_decode_any_map_never_raises(type_name: str, fields: dict[str, Any]) -> None:
    frame = msgpack.packb({"type": type_name, "v": 1, **fields})
    result = p.decode_msgpack(frame)
    assert isinstance(result, p.Message | p.Unexpected)
    if isinstance(result, p.Message):
        assert p.decode_json(p.encode_json(result)) == result


def test_socket_path_names_the_room_url_encoded_in_lower_case() -> None:
    assert p.socket_path("3f2a9c1b") == "/ws?room=3f2a9c1b"
    assert p.socket_path("3F2A9C1B") == "/ws?room=3f2a9c1b"  # codes are case-blind
    assert p.socket_path("5be0c2d1-1") == "/ws?room=5be0c2d1-1"
    assert p.socket_path("a b&c=d/é") == "/ws?room=a%20b%26c%3Dd%2F%C3%A9"
    assert p.socket_path(None) == p.socket_path("") == "/ws"
