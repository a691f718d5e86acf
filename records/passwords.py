"""Passwords of claimed accounts: Argon2id (argon2-cffi, its default parameters: 64 MiB,
3 passes), hashed and checked in a worker thread, so that the event loop keeps serving
every other player meanwhile (one hash takes tens of milliseconds of CPU)."""

from __future__ import annotations

import asyncio
import unicodedata

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

__all__ = [
    "PASSWORD_MAX",
    "PASSWORD_MIN",
    "BadPassword",
    "check_password",
    "hash_password",
    "verify_password",
]

PASSWORD_MIN = 8
PASSWORD_MAX = 256  # characters: longer ones only cost the hasher's time

_HASHER = PasswordHasher()  # Argon2id


class BadPassword(ValueError):
    """A password that cannot be used; the message says why."""


def check_password(password: object) -> str:
    if not isinstance(password, str):
        raise BadPassword("a password is a string")
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise BadPassword(f"a password has {PASSWORD_MIN} to {PASSWORD_MAX} characters")
    return password


def _bytes(password: str) -> bytes:
    """A password's UTF-8, a lone surrogate (JSON's `"\\ud800"`) included as it is: any
    string is a password, hashed and checked alike (as records/keys.py's secrets are)."""
    return password.encode("utf-8", "surrogatepass")


def _normal(password: str) -> str:
    """The password as it is hashed: in Unicode's NFKC form (NIST SP 800-63B), so that one
    password typed on two keyboards is one password: an "é" sent as one character or as
    "e" and a combining accent, a full-width letter as its letter."""
    return unicodedata.normalize("NFKC", password)


async def hash_password(password: str) -> str:
    """The Argon2id hash of `password` (with its salt and parameters), off the loop."""
    return await asyncio.to_thread(_HASHER.hash, _bytes(_normal(password)))


def _verify(stored: str, password: str) -> bool:
    # A hash made before passwords were normalised is of the form as typed: tried second,
    # only for a password that normalising changes.
    forms = dict.fromkeys((_normal(password), password))
    return any(_matches(stored, form) for form in forms)


def _matches(stored: str, password: str) -> bool:
    try:
        return _HASHER.verify(stored, _bytes(password))
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


async def verify_password(stored: str, password: str) -> bool:
    """Whether `password` is the one `stored` was made from, off the loop."""
    return await asyncio.to_thread(_verify, stored, password)
