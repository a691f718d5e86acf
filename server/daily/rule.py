"""Which deal each game has on a UTC day: chosen from the date by a rule anyone can check
afterwards, and that nobody (the operator included) can steer once the key is committed.

- The day's key is HMAC-SHA256(server secret, "solrace daily " + the date, YYYY-MM-DD). The
  secret never leaves the server; the day's key is published once the day is over, and its
  SHA-256 (the commitment) from the start: a key published later that does not hash to the
  commitment shown during the day would give the change away.
- Candidate n of a game is HMAC-SHA256(day key, "GAME n"), its first 8 bytes as a big-endian
  number, modulo 2^63-1, plus 1 (a deal number). The deal is the first candidate (n = 0, 1,
  ...) that the solver (core/solver) proves winnable within SOLVER_BUDGET positions: the
  search is deterministic, so `python -m core solve GAME SEED --budget N` gives the same
  verdicts anywhere.

Why: a hash of the date alone could be computed by anyone beforehand (a line prepared the
night before); a key the operator picks freely could be chosen for a deal they practised.
A per-day key derived from one secret is neither: it is unknown until published, and fixed
(committed) before the day starts. Pure: no clock, no I/O.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac

import core
from core.solver import solve

__all__ = [
    "MAX_CANDIDATES",
    "SOLVER_BUDGET",
    "candidate",
    "commitment",
    "daily_seed",
    "day_bounds",
    "day_key",
    "day_of",
    "day_over",
]

SOLVER_BUDGET = 20_000  # positions: each candidate's search is bounded and deterministic
MAX_CANDIDATES = 256


def day_of(now: float) -> dt.date:
    """The UTC day of a Unix time."""
    return dt.datetime.fromtimestamp(now, dt.UTC).date()


def day_bounds(day: dt.date) -> tuple[float, float]:
    """The day's start and end (Unix seconds, UTC)."""
    start = dt.datetime.combine(day, dt.time(), dt.UTC).timestamp()
    return start, start + 86400.0


def day_over(daily: str, now: float) -> bool:
    """Whether the day of a daily deal ("DATE GAME") is over at `now`: its line is
    everyone's from then on."""
    return dt.date.fromisoformat(daily.split(" ")[0]) < day_of(now)


def day_key(secret: bytes, day: dt.date) -> bytes:
    return hmac.new(secret, f"solrace daily {day.isoformat()}".encode(), hashlib.sha256).digest()


def commitment(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()


def candidate(key: bytes, game: str, n: int) -> int:
    digest = hmac.new(key, f"{game} {n}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % core.MAX_SEED + 1


def daily_seed(key: bytes, game: str) -> tuple[int, int]:
    """The day's deal of `game` and its candidate number."""
    for n in range(MAX_CANDIDATES):
        seed = candidate(key, game, n)
        if solve(core.new_game(game, seed), budget=SOLVER_BUDGET).result == "won":
            return seed, n
    raise ValueError(f"no winnable {game} deal among {MAX_CANDIDATES} candidates")
