"""What a player can do with their account, whichever way they ask (HTTP or a socket):
make an anonymous player, find who a key signs in, choose a name, claim the account
with a password and change it, sign in and out, see the devices holding their keys and
sign them out, link a device with a one-time code.

Every refusal is an `IdentityError` with a protocol code and the HTTP status it maps
to. Secrets (keys, passwords, link codes) are only ever hashed here and never logged;
a new key or link code is handed to the caller once, to give to the device it is for.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

import protocol as p
from protocol import ErrorCode
from records.keys import (
    device_id,
    hash_secret,
    new_link_code,
    new_player_key,
    normalise_link_code,
)
from records.names import GUEST_PREFIX, BadName, check_name
from records.passwords import BadPassword, check_password, hash_password, verify_password
from records.players import (
    SEEN_EVERY,
    AlreadyClaimed,
    KeySignedOut,
    NameTaken,
    PasswordChanged,
    PastName,
    Player,
    PlayerStore,
)
from records.profiles import Profiles
from records.ratings import Rating
from server.identity.signin_limit import SignInLimit

__all__ = ["LINK_CODE_TTL", "Accounts", "IdentityError", "anothers", "player_ref"]

log = logging.getLogger(__name__)

LINK_CODE_TTL = 600.0  # seconds a link code may be used
LABEL_MAX = 60  # characters of a device's label kept
NAME_CHECK_WAIT = 0.5  # seconds an anonymous seat waits to know whether its name is a player's


T = TypeVar("T")


class IdentityError(Exception):
    def __init__(self, code: ErrorCode, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.retry_after: float | None = None


def player_ref(player: Player) -> p.PlayerRef:
    """The PLAYER object: what anyone may see of who a socket acts as."""
    return {"id": player.id, "name": player.name, "bot": player.bot, "claimed": player.claimed}


def anothers(owner: str | None, asker: str | None) -> bool:
    """Whether what `owner` holds (a seat, a tournament registration) is another player's
    to a socket acting as `asker`: an identified socket acts for nobody else. An anonymous
    socket, or what was taken with no identity, is as its token says."""
    return asker is not None and owner is not None and owner != asker


_GIVEN_UP: set[asyncio.Future[Any]] = set()  # work left to end (kept from the collector)


def _leave_to_end(work: asyncio.Future[Any]) -> None:
    """Let `work` (a lookup given up on, a key's use to note) end in the background; what
    it fails with is an outage of the records, said by whoever needs them."""
    _GIVEN_UP.add(work)
    work.add_done_callback(_ignored)


def _ignored(work: asyncio.Future[Any]) -> None:
    """Work left to end has ended: its outcome is read, so that asyncio does not report
    it."""
    _GIVEN_UP.discard(work)
    if not work.cancelled() and (error := work.exception()) is not None:
        log.debug("left to end in the background, failed: %r", error)


def _signed_out_meanwhile() -> IdentityError:
    """A key that signs nobody in (any more: signed out, from this device or another)."""
    return IdentityError(
        ErrorCode.BAD_KEY,
        "that player key signs nobody in (signed out?): make a new player or sign in",
        401,
    )


def _label(label: object) -> str | None:
    if not isinstance(label, str):
        return None
    return "".join(ch for ch in label if ch.isprintable()).strip()[:LABEL_MAX] or None


async def _in_time(lookup: Awaitable[T]) -> tuple[T] | None:
    """`lookup`'s answer (in a 1-tuple), if the records give it within NAME_CHECK_WAIT;
    None if they do not or fail (the lookup then ends in the background): what only
    dresses an answer (a name) never waits on a database that does not answer."""
    work = asyncio.ensure_future(lookup)
    done, _ = await asyncio.wait({work}, timeout=NAME_CHECK_WAIT)
    if not done:
        _leave_to_end(work)
        return None
    try:
        return (work.result(),)
    except Exception as exc:  # the records are down: said by whoever needs them
        log.debug("a lookup in the records failed: %r", exc)
        return None


class Accounts:
    def __init__(
        self,
        players: PlayerStore,
        limit: SignInLimit,
        profiles: Profiles | None = None,
    ) -> None:
        self.players = players
        self.profiles = profiles or Profiles(players.engine)
        self.limit = limit

    async def rating(self, player_id: str, game: str) -> int | None:
        """The player's displayed rating in `game` now, if they have one."""
        shown = await self.shown_rating(player_id, game)
        return None if shown is None else shown.display

    async def shown_rating(self, player_id: str, game: str) -> Rating | None:
        """The player's rating in `game` now, with whether it is provisional."""
        return await self.profiles.rating(player_id, game, time.time())

    async def best_run(self, player_id: str, game: str) -> dict[str, Any] | None:
        """The player's personal best in `game`, for the delta at each split: its race,
        `time` and `splits` in seconds (as the live splits are); None without a win."""
        best = await self.profiles.best_run(player_id, game)
        if best is None:
            return None
        return {
            "game": game,
            "race": best["race"],
            "time": best["time_ms"] / 1000,
            "splits": [None if s is None else s / 1000 for s in best["splits"]],
        }

    async def create(
        self, now: float, *, bot: bool = False, label: object = None
    ) -> tuple[Player, str]:
        """A new anonymous player, and the key (kept by the client) that signs it in."""
        key = new_player_key()
        player = await self.players.create(hash_secret(key), now, bot=bot, label=_label(label))
        log.info("new %s player %s", "bot" if bot else "anonymous", player.id)
        return player, key

    async def who(self, key: str | None, now: float) -> Player:
        """The player `key` signs in (IdentityError bad_key if none)."""
        if not key:
            raise IdentityError(
                ErrorCode.BAD_KEY,
                "send your player key (over HTTP: Authorization: Bearer KEY; on the WebSocket: "
                "identify with it as key)",
                401,
            )
        return await self.who_by_hash(hash_secret(key), now)

    async def who_by_hash(self, key_hash: str, now: float) -> Player:
        """The player the key of this hash signs in now (a socket's, which identified with
        it earlier: IdentityError bad_key once it was signed out, from any process)."""
        found = await self.players.key_holder(key_hash)
        if found is None:
            raise _signed_out_meanwhile()
        player, last_used_at = found
        if now - last_used_at >= SEEN_EVERY:
            # A write, and bookkeeping only: signing in must not wait for it (another
            # writer may hold the records for seconds), nor fail with it.
            _leave_to_end(asyncio.ensure_future(self.players.note_use(key_hash, player.id, now)))
        return player

    async def someones_name(self, name: str) -> bool:
        """Whether `name` is a player's name now, in any case, as far as the records say
        within NAME_CHECK_WAIT: an anonymous seat or registration asks, so that nobody
        passes for that player, but never waits on a database that does not answer (the
        name then goes as typed; the lookup ends in the background)."""
        if not name.strip():
            return False
        found = await _in_time(self.players.by_name(name.strip()))
        return found is not None and found[0] is not None

    async def names_now(self, player_ids: Iterable[str]) -> dict[str, str]:
        """The players' names now, as far as the records say within NAME_CHECK_WAIT (a
        quick match's ticket holds its player's name of when it was queued): a player the
        records do not answer for in time is left out, and their ticket's name goes."""
        found = await _in_time(self.players.by_ids(player_ids))
        if found is None:
            return {}
        return {player_id: player.name for player_id, player in found[0].items()}

    async def rename(self, player: Player, name: object, now: float) -> Player:
        try:
            chosen = check_name(name)
        except BadName as err:
            raise IdentityError(ErrorCode.BAD_NAME, str(err)) from None
        if chosen != player.name:  # the name they have already changes nothing
            _wait_for(await self.limit.rename(player.id), "renames")
        try:
            return await self.players.rename(player.id, chosen, now)
        except NameTaken:
            raise IdentityError(
                ErrorCode.NAME_TAKEN, f"another player is called {chosen!r}", 409
            ) from None

    async def names(self, player: Player) -> list[PastName]:
        return await self.players.names(player.id)

    async def claim(self, player: Player, key: str, password: object, now: float) -> Player:
        """Give the account a password: from then on it can be signed into by name. Asked
        for by the device holding `key` (bad_key if it was signed out meanwhile)."""
        if player.bot:
            raise IdentityError(ErrorCode.BAD_REQUEST, "a bot's account cannot be claimed")
        if player.claimed:
            raise IdentityError(
                ErrorCode.ALREADY_CLAIMED, "this account has a password already", 409
            )
        if player.name.startswith(GUEST_PREFIX):  # a name others can find them by
            raise IdentityError(
                ErrorCode.BAD_NAME, "choose a name before claiming the account (POST /me/name)"
            )
        try:
            chosen = check_password(password)
        except BadPassword as err:
            raise IdentityError(ErrorCode.BAD_PASSWORD, str(err)) from None
        stored = await hash_password(chosen)
        try:
            return await self.players.claim(player.id, stored, now, hash_secret(key))
        except KeySignedOut:
            raise _signed_out_meanwhile() from None
        except AlreadyClaimed:
            raise IdentityError(
                ErrorCode.ALREADY_CLAIMED, "this account has a password already", 409
            ) from None

    async def sign_in(
        self, address: str | None, name: object, password: object, now: float, label: object
    ) -> tuple[Player, str]:
        """A new key for this device, signing it in as the account called `name`."""
        if not isinstance(name, str) or not isinstance(password, str):
            raise IdentityError(ErrorCode.BAD_REQUEST, "send name and password, as strings")
        await self._take_attempt(address, name)
        found = await self.players.password_of(name)
        if found is None:
            raise IdentityError(ErrorCode.UNKNOWN_PLAYER, f"no player is called {name[:40]!r}", 404)
        player, stored = found
        if stored is None:
            raise IdentityError(
                ErrorCode.NOT_CLAIMED,
                f"{player.name} has no password: sign in with a link code from a device of theirs",
                403,
            )
        if not await verify_password(stored, password):
            raise IdentityError(ErrorCode.WRONG_PASSWORD, "wrong password", 401)
        await self.limit.succeeded(name)
        key = new_player_key()
        await self.players.add_key(player.id, hash_secret(key), now, _label(label))
        log.info("player %s signed in on a new device", player.id)
        return player, key

    async def sign_out(self, key: str) -> None:
        await self.players.revoke_key(hash_secret(key))

    async def devices(self, player: Player, key: str) -> list[dict[str, Any]]:
        """The devices holding the player's keys, the latest used first; `current`: the
        one holding `key`, which asks."""
        current = device_id(hash_secret(key))
        return [
            {
                "id": device.id,
                "label": device.label,
                "created_at": device.created_at,
                "last_used_at": device.last_used_at,
                "current": device.id == current,
            }
            for device in await self.players.devices(player.id)
        ]

    async def sign_out_device(self, player: Player, key: str, device: str) -> None:
        """Sign out the player's device of that id: this one (`key`'s) as `sign_out` does;
        another's key, and the player's unused link codes with it. An id that is none of
        the player's devices, another player's or none at all, is unknown alike."""
        if device == device_id(hash_secret(key)):
            await self.sign_out(key)
            return
        try:
            found = await self.players.revoke_device(player.id, device, hash_secret(key))
        except KeySignedOut:
            raise _signed_out_meanwhile() from None
        if not found:
            raise IdentityError(
                ErrorCode.UNKNOWN_DEVICE, "none of your devices has that id (signed out?)", 404
            )
        log.info("player %s signed a device out from another", player.id)

    async def sign_out_others(self, player: Player, key: str) -> int:
        """Sign out every device of the player but this one (`key`'s); how many."""
        try:
            count = await self.players.revoke_other_keys(player.id, hash_secret(key))
        except KeySignedOut:
            raise _signed_out_meanwhile() from None
        log.info("player %s signed out %d other devices", player.id, count)
        return count

    async def change_password(
        self,
        address: str | None,
        player: Player,
        key: str,
        password: object,
        new_password: object,
    ) -> tuple[Player, int]:
        """A claimed account's new password, given its current one: a wrong one counts
        against the sign-in limits, as a sign-in does. Every device but this one (`key`'s)
        is signed out; the player and how many devices were."""
        if not isinstance(password, str) or not isinstance(new_password, str):
            raise IdentityError(ErrorCode.BAD_REQUEST, "send password and new_password, as strings")
        stored = await self.players.password_hash(player.id)
        if stored is None:
            raise IdentityError(
                ErrorCode.NOT_CLAIMED,
                "this account has no password yet: claim it (POST /me/claim)",
                403,
            )
        try:
            chosen = check_password(new_password)
        except BadPassword as err:
            raise IdentityError(ErrorCode.BAD_PASSWORD, str(err)) from None
        await self._take_attempt(address, player.name)  # the budgets a sign-in spends
        if not await verify_password(stored, password):
            raise IdentityError(ErrorCode.WRONG_PASSWORD, "wrong password", 401)
        await self.limit.succeeded(player.name)
        try:
            count = await self.players.change_password(
                player.id, stored, await hash_password(chosen), hash_secret(key)
            )
        except PasswordChanged:
            raise IdentityError(
                ErrorCode.WRONG_PASSWORD, "the password was changed meanwhile", 401
            ) from None
        except KeySignedOut:
            raise _signed_out_meanwhile() from None
        log.info("player %s changed their password, %d other devices signed out", player.id, count)
        return player, count

    async def link_code(self, player: Player, key: str, now: float) -> tuple[str, float]:
        """A one-time code that signs another device in as `player`, and when it expires;
        asked for by the device holding `key` (bad_key if it was signed out meanwhile)."""
        code = new_link_code()
        expires_at = now + LINK_CODE_TTL
        try:
            await self.players.add_link_code(
                player.id, hash_secret(code), expires_at, hash_secret(key)
            )
        except KeySignedOut:
            raise _signed_out_meanwhile() from None
        return code, expires_at

    async def link(
        self, address: str | None, typed: object, now: float, label: object
    ) -> tuple[Player, str]:
        if not isinstance(typed, str):
            raise IdentityError(ErrorCode.BAD_REQUEST, "send code, as a string")
        await self._take_attempt(address, None)
        code = normalise_link_code(typed)
        key = new_player_key()
        player = (
            None
            if code is None
            else await self.players.use_link_code(
                hash_secret(code), hash_secret(key), now, _label(label)
            )
        )
        if player is None:
            raise IdentityError(
                ErrorCode.BAD_CODE, "that code is unknown, used or expired: make a new one", 404
            )
        log.info("player %s linked a new device", player.id)
        return player, key

    async def _take_attempt(self, address: str | None, name: str | None) -> None:
        """Count an attempt at a password (or a link code: `name` None); IdentityError
        rate_limited, before anything is checked, when it must wait."""
        _wait_for(await self.limit.take(address, name), "attempts")


def _wait_for(wait: float, what: str) -> None:
    """IdentityError rate_limited (429, Retry-After) when a budget says to wait."""
    if wait > 0:
        err = IdentityError(
            ErrorCode.RATE_LIMITED,
            f"too many {what}: try again in {math.ceil(wait)} s",  # as Retry-After
            429,
        )
        err.retry_after = wait
        raise err
