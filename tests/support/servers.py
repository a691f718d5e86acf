"""In-process race servers (`make_server` in tests/conftest.py is built on these)."""

from collections.abc import Awaitable, Callable

__all__ = ["MakeServer"]

MakeServer = Callable[..., Awaitable[str]]
