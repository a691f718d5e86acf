"""Redis commands as RESP, without I/O: what the lean connection (server/redis_io/resp.py)
writes. Every move's script call is encoded here, so the compiled build of the move path
compiles this module (core/build.py); its source is the reference and runs where no C
compiler is."""

from __future__ import annotations

import functools
from collections.abc import Sequence

__all__ = ["Arg", "encode_command", "encode_fcall"]

Arg = bytes | str | int | float


def encode_command(args: Sequence[Arg]) -> bytes:
    """One command as a RESP array of bulk strings."""
    return b"*%d\r\n%b" % (len(args), _bulks(args))


def encode_fcall(
    function: str, keys: tuple[str, ...], args: Sequence[Arg], fixed: tuple[Arg, ...] = ()
) -> bytes:
    """``FCALL function len(keys) *keys *fixed *args`` as encode_command would write it;
    the part up to `fixed` (the arguments that never change for these keys) is encoded
    once per (function, keys, fixed): the same for every move of a seat."""
    size = 3 + len(keys) + len(fixed) + len(args)
    return b"*%d\r\n%b%b" % (size, _fcall_head(function, keys, fixed), _bulks(args))


@functools.lru_cache(maxsize=16384)
def _fcall_head(function: str, keys: tuple[str, ...], fixed: tuple[Arg, ...]) -> bytes:
    return _bulks(("FCALL", function, len(keys), *keys, *fixed))


def _bulks(args: Sequence[Arg]) -> bytes:
    parts = []
    for arg in args:
        if isinstance(arg, bytes):
            data = arg
        elif isinstance(arg, str):
            data = arg.encode()
        elif isinstance(arg, int):
            data = b"%d" % arg
        else:
            data = repr(arg).encode()
        parts.append(b"$%d\r\n%b\r\n" % (len(data), data))
    return b"".join(parts)
