"""The reused msgpack packer gives what msgpack.packb gives, and a failed pack leaves it
clean for the next one."""

from __future__ import annotations

import msgpack
import pytest

import protocol as p


def test_pack_map_is_packb() -> None:
    for wire in (
        p.to_wire(
            p.Accepted(seq=3, move="t1 c1", progress=1, moves=2, won=False, stuck=False, version=9)
        ),
        {"type": "progress", "v": 1, "board": {"piles": [[1, 2], []], "x": b"\x00"}, "at": 1.5},
        {},
    ):
        assert p.pack_map(wire) == msgpack.packb(wire, use_bin_type=True)
    assert p.encode_msgpack(p.Pong(id=4, server_time=1.5)) == msgpack.packb(
        p.to_wire(p.Pong(id=4, server_time=1.5))
    )


def test_a_failed_pack_does_not_leak_into_the_next() -> None:
    with pytest.raises(TypeError):
        p.pack_map({"type": "x", "bad": object()})
    assert msgpack.unpackb(p.pack_map({"a": 1})) == {"a": 1}
