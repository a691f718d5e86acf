"""Redis commands as RESP (server/redis_io/resp_encode.py): what the lean connection writes,
on either build of the move path."""

from __future__ import annotations

from server.redis_io.resp_encode import encode_command, encode_fcall


def test_commands_are_resp_arrays_of_bulk_strings() -> None:
    assert encode_command(("SET", b"k", 12, 1.5)) == (
        b"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n12\r\n$3\r\n1.5\r\n"
    )
    assert encode_command(("ECHO", "é")) == b"*2\r\n$4\r\nECHO\r\n$2\r\n\xc3\xa9\r\n"


def test_fcall_with_its_cached_head_encodes_as_the_plain_command() -> None:
    function, args = (
        "solrace_move_0123456789abcdef",
        (3, "1700000000000 t1 c1", b"\x81\xa1a\x01", 1.5),
    )
    for keys in (("{room:a}:meta", "{room:a}:seq:0"), ("{room:b}:meta",), ()):
        for fixed in ((), (0, 512, "{room:a}:events"), (1, 512, "{room:a}:events")):
            for _ in range(2):  # the second time from the cache
                assert encode_fcall(function, keys, args, fixed) == encode_command(
                    ("FCALL", function, len(keys), *keys, *fixed, *args)
                )
