"""The secrets that prove who a player is, and how they are stored: only as hashes.

- A player key (32 random bytes, URL-safe base64) is given to a device when it first
  visits or signs in, kept by its client and sent with every request that acts as the
  player; the records keep its SHA-256 (a key is random, so no slow hash is needed).
- A link code (8 characters from an alphabet without look-alikes, shown `ABCD-EFGH`) is
  typed on a second device to sign it in without a password: short-lived, one use, and
  kept as its SHA-256 too.
- A player id (16 hex characters) is public: it appears in URLs and payloads.
- A device id (16 hex characters) names one of a player's keys to the player, so that
  they can see and sign out their devices: drawn from the key's hash, it gives away
  neither the key nor the hash.
"""

from __future__ import annotations

import hashlib
import secrets

__all__ = [
    "LINK_ALPHABET",
    "LINK_LENGTH",
    "device_id",
    "hash_secret",
    "new_link_code",
    "new_player_id",
    "new_player_key",
    "normalise_link_code",
]

LINK_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
LINK_LENGTH = 8


def new_player_id() -> str:
    return secrets.token_hex(8)


def new_player_key() -> str:
    return secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    """What the records keep of a player key or a link code."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def device_id(key_hash: str) -> str:
    """The public id of the device holding the key of this hash."""
    return hashlib.sha256(f"device {key_hash}".encode()).hexdigest()[:16]


def new_link_code() -> str:
    """A fresh link code as shown to the player: `ABCD-EFGH`."""
    code = "".join(secrets.choice(LINK_ALPHABET) for _ in range(LINK_LENGTH))
    return f"{code[:4]}-{code[4:]}"


def normalise_link_code(typed: str) -> str | None:
    """The code as it was issued, from what a player typed (any case, with or without the
    dash and spaces), or None when it cannot be a code at all."""
    letters = "".join(ch for ch in typed.upper() if ch not in "- ")
    if len(letters) != LINK_LENGTH or any(ch not in LINK_ALPHABET for ch in letters):
        return None
    return f"{letters[:4]}-{letters[4:]}"
