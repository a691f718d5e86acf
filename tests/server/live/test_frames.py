"""WebSocket frames of the server's messages (server/live/frames.py), on either build of the
move path: RFC 6455's three length forms, close frames, and one frame per format per message."""

from __future__ import annotations

import json
import struct

import msgpack

import protocol as p
from server.live.frames import Outgoing, close_frame, frame


def test_each_payload_length_gets_its_header_form() -> None:
    assert frame(b"", True) == b"\x82\x00"
    assert frame(b"x" * 125, False) == b"\x81\x7d" + b"x" * 125
    assert frame(b"y" * 126, True) == b"\x82\x7e" + struct.pack("!H", 126) + b"y" * 126
    assert frame(b"z" * 65535, True)[:4] == b"\x82\x7e\xff\xff"
    big = frame(b"w" * 65536, False)
    assert big[:10] == b"\x81\x7f" + struct.pack("!Q", 65536) and len(big) == 65546


def test_a_close_frame_carries_its_code_and_at_most_123_bytes_of_reason() -> None:
    assert close_frame(4000, "slow") == b"\x88\x06\x0f\xa0slow"
    long = close_frame(1001, "é" * 100)
    assert long[1] == 125 and long[2:4] == struct.pack("!H", 1001)
    assert long[4:] == ("é" * 100).encode()[:123]


def test_a_message_is_framed_once_per_format_as_its_wire_map() -> None:
    accepted = p.Accepted(
        seq=3, move="t1 c1", progress=2, moves=5, won=False, stuck=True, version=9
    )
    out = Outgoing(accepted)
    binary = out.frame(True)
    assert binary == frame(p.encode_msgpack(accepted), True)
    assert msgpack.unpackb(binary[2:]) == p.to_wire(accepted)
    text = out.frame(False)
    assert json.loads(text[2:]) == p.to_wire(accepted)
    assert out.frame(True) is binary and out.frame(False) is text  # built once each
    assert out.message is accepted and out.wire is None


def test_a_variant_wire_map_is_sent_instead_of_the_message() -> None:
    event = p.Progress(
        version=4, at=1.5, seat=1, progress=3, moves=7, won=False, stuck=False, move="t2 f"
    )
    hidden = {k: v for k, v in p.to_wire(event).items() if k != "move"}
    out = Outgoing(event, hidden)
    assert msgpack.unpackb(out.frame(True)[2:]) == hidden
    assert json.loads(out.frame(False)[2:].decode()) == hidden
    text = Outgoing(p.Refused(seq=1, code="illegal", reason="Q♦ on K♠")).frame(False)
    assert "Q♦ on K♠" in text[2:].decode()  # not escaped: UTF-8 as it is
