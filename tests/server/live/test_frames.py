"""WebSocket frames of the server's messages (server/live/frames.py), on either build of the
move path: RFC 6455's three length forms, close frames, and one frame per format per message."""

from __future__ import annotations

import json
import random
import struct

import msgpack

import protocol as p
from server.live.frames import MaskCheck, Outgoing, close_frame, frame


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


def client_frame(payload: bytes, masked: bool = True) -> bytes:
    """A client's text frame, masked with a zero key (any key will do) or not."""
    size = len(payload)
    if size < 126:
        head = struct.pack("!BB", 0x81, size)
    elif size < 65536:
        head = struct.pack("!BBH", 0x81, 126, size)
    else:
        head = struct.pack("!BBQ", 0x81, 127, size)
    if not masked:
        return head + payload
    return bytes((head[0], head[1] | 0x80)) + head[2:] + bytes(4) + payload


def test_masked_frames_of_each_length_form_pass_in_any_reads() -> None:
    stream = b"".join(client_frame(b"x" * n) for n in (0, 5, 125, 126, 300, 65535, 65536, 70000))
    for cut in (1, 2, 3, 7, 64, 4096, len(stream)):
        check = MaskCheck()
        chunks = [stream[i : i + cut] for i in range(0, len(stream), cut)]
        assert [check.feed(c) for c in chunks] == [-1] * len(chunks)


def test_an_unmasked_frame_is_found_where_it_begins() -> None:
    first = client_frame(b"a" * 130)
    bad = client_frame(b"b" * 10, masked=False)
    assert MaskCheck().feed(first + bad + client_frame(b"c")) == len(first)
    assert MaskCheck().feed(bad) == 0
    # Its header split over two reads: found in the second, at its start.
    check = MaskCheck()
    assert check.feed(first + bad[:1]) == -1
    assert check.feed(bad[1:]) == 0
    # A payload that looks like an unmasked header is not one.
    check = MaskCheck()
    assert check.feed(client_frame(bad * 20)[:50]) == -1
    assert check.feed(client_frame(bad * 20)[50:] + client_frame(b"d")) == -1


def test_random_reads_find_the_unmasked_frame_where_it_begins() -> None:
    rng = random.Random(5)
    for _ in range(200):
        frames = [client_frame(b"p" * rng.choice((0, 3, 125, 126, 200, 70000))) for _ in range(5)]
        bad = rng.randrange(6)  # 5: every frame masked
        if bad < 5:
            frames[bad] = client_frame(b"q" * rng.choice((1, 130)), masked=False)
        stream = b"".join(frames)
        begins = sum(map(len, frames[:bad])) if bad < 5 else -1
        check, at, found = MaskCheck(), 0, -1
        while at < len(stream):
            chunk = stream[at : at + rng.randint(1, 300)]
            where = check.feed(chunk)
            if where >= 0:
                found = at + where
                break
            at += len(chunk)
        if bad < 5:
            # At its start, or at the start of the read holding its header's second byte
            # (where the mask bit is), its first byte read before.
            assert begins <= found <= begins + 1
        else:
            assert found == -1
