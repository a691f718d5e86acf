"""Types shared by test modules (the fixtures themselves live in conftest.py)."""

from collections.abc import Awaitable, Callable

__all__ = ["MakeServer"]

MakeServer = Callable[..., Awaitable[str]]
