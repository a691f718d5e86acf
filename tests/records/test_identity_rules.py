"""The pure rules of identity: names, keys and link codes, passwords."""

from __future__ import annotations

import random

import pytest
from argon2 import PasswordHasher

from records.keys import (
    LINK_ALPHABET,
    hash_secret,
    new_link_code,
    new_player_id,
    new_player_key,
    normalise_link_code,
)
from records.names import BadName, check_name, guest_name, name_key
from records.passwords import BadPassword, check_password, hash_password, verify_password


@pytest.mark.parametrize("name", ["ann", "bo", "Bo_2", "x-y-z", "a" * 20, "007", "Zed"])
def test_names_that_may_be_chosen(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("a", "2 to 20"),
        ("a" * 21, "2 to 20"),
        ("an n", "letters"),
        ("_ann", "begins"),
        ("ann\x1b[2J", "letters"),
        ("Zoë", "letters"),
        ("guest-1234", "new players"),
        ("GUEST-ann", "new players"),
        ("bot-7", "new players"),
        (7, "string"),
    ],
)
def test_names_refused_say_why(name: object, why: str) -> None:
    with pytest.raises(BadName, match=why):
        check_name(name)


def test_names_are_one_whatever_their_case() -> None:
    assert name_key("Ann") == name_key("aNN") == "ann"


def test_guest_names_grow_after_collisions_and_are_not_choosable() -> None:
    rng = random.Random(1)
    first, later = guest_name(rng), guest_name(rng, attempt=3)
    assert first.startswith("Guest-") and len(first) == len("Guest-") + 4
    assert len(later) == len("Guest-") + 7
    assert guest_name(rng, bot=True).startswith("Bot-")
    with pytest.raises(BadName):
        check_name(first)


def test_keys_ids_and_codes() -> None:
    key = new_player_key()
    assert len(key) == 43 and key != new_player_key()
    assert hash_secret(key) == hash_secret(key) != key and len(hash_secret(key)) == 64
    assert len(new_player_id()) == 16
    code = new_link_code()
    assert len(code) == 9 and code[4] == "-"
    assert all(ch in LINK_ALPHABET for ch in code.replace("-", ""))
    assert normalise_link_code(code.lower().replace("-", " ")) == code
    assert normalise_link_code("ABCD-EFG0") is None  # 0 is not in the alphabet
    assert normalise_link_code("ABC") is None


def test_password_rules() -> None:
    assert check_password("long enough") == "long enough"
    for bad in ("short", "x" * 257, None):
        with pytest.raises(BadPassword):
            check_password(bad)


async def test_passwords_are_argon2id_and_checked() -> None:
    stored = await hash_password("correct horse")
    assert stored.startswith("$argon2id$")
    assert "correct horse" not in stored
    assert await verify_password(stored, "correct horse")
    assert not await verify_password(stored, "wrong horse")
    assert not await verify_password("not a hash", "correct horse")


async def test_a_password_is_the_same_however_its_accents_were_typed() -> None:
    """One password, whatever form of Unicode the keyboard sent: an "é" typed as one
    character (NFC, most keyboards) or as "e" and a combining accent (NFD, some systems'
    input), and a full-width letter as the letter (NFKC, as NIST SP 800-63B advises)."""
    composed, decomposed = "caf\u00e9 au lait", "cafe\u0301 au lait"
    stored = await hash_password(composed)
    assert await verify_password(stored, decomposed)
    assert await verify_password(await hash_password(decomposed), composed)
    assert await verify_password(await hash_password("\uff41bcdefgh"), "abcdefgh")
    assert not await verify_password(stored, "cafe au lait")
    # A hash made of the form as typed, before passwords were normalised, still checks.
    legacy = PasswordHasher().hash(decomposed.encode())
    assert await verify_password(legacy, decomposed)
    assert not await verify_password(legacy, "cafe au lait")
