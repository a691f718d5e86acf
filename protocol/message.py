"""The base class of every wire message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

__all__ = ["Message"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """Base class of every message; `TYPE` is its wire name."""

    TYPE: ClassVar[str] = ""
