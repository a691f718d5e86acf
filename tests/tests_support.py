"""Types shared by test modules (the fixtures themselves live in conftest.py)."""

import socket
from collections.abc import Awaitable, Callable

__all__ = ["MakeServer", "free_port"]

MakeServer = Callable[..., Awaitable[str]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
