"""Players: who they are, their names, the keys of their devices, and link codes.

`PlayerStore` is the only way to the `players`, `player_keys`, `player_names` and
`link_codes` tables. It stores what it is given: secrets arrive already hashed
(records/keys.py, records/passwords.py) and names already checked (records/names.py),
except the uniqueness of a name, which only the database can decide (`NameTaken`).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from records.engine import snapshot
from records.keys import device_id, new_player_id
from records.names import guest_name, name_key
from records.schema import link_codes, player_keys, player_names, players
from records.sql import storable

__all__ = [
    "AlreadyClaimed",
    "Device",
    "KeySignedOut",
    "NameTaken",
    "PasswordChanged",
    "PastName",
    "Player",
    "PlayerStore",
    "UnknownPlayer",
    "names_in",
    "player_in",
]

GUEST_ATTEMPTS = 8  # guest names tried (each longer than the last) before giving up
SEEN_EVERY = 60.0  # seconds: a key's last use is written at most this often


class NameTaken(Exception):
    """Another player has that name (whatever its case)."""


class AlreadyClaimed(Exception):
    """The account has a password already."""


class UnknownPlayer(Exception):
    """No player has that id."""


class PasswordChanged(Exception):
    """The account's password is no longer the one read (changed meanwhile)."""


class KeySignedOut(Exception):
    """The key a request acts by was signed out meanwhile (from another device): it acts
    for nobody, so it signs no other device out."""


@dataclass(frozen=True, slots=True)
class Player:
    id: str
    name: str
    bot: bool
    claimed: bool
    created_at: float
    last_seen_at: float


@dataclass(frozen=True, slots=True)
class Device:
    """One of a player's keys, as the player sees it."""

    id: str  # records.keys.device_id of the key's hash
    label: str | None
    created_at: float
    last_used_at: float  # to SEEN_EVERY


@dataclass(frozen=True, slots=True)
class PastName:
    name: str
    until_at: float  # when it stopped being the player's name


_COLUMNS = (
    players.c.id,
    players.c.name,
    players.c.is_bot,
    players.c.password_hash,
    players.c.created_at,
    players.c.last_seen_at,
)


def _player(row: Any) -> Player:  # a Row of _COLUMNS
    return Player(
        id=row.id,
        name=row.name,
        bot=bool(row.is_bot),
        claimed=row.password_hash is not None,
        created_at=row.created_at,
        last_seen_at=row.last_seen_at,
    )


async def player_in(db: AsyncConnection, player_id: str) -> Player | None:
    """The player with that id, read in `db`'s transaction (e.g. a profile's snapshot)."""
    row = (await db.execute(sa.select(*_COLUMNS).where(players.c.id == player_id))).first()
    return None if row is None else _player(row)


async def names_in(db: AsyncConnection, player_id: str) -> list[PastName]:
    """The player's earlier names, the latest first, read in `db`'s transaction."""
    rows = (
        await db.execute(
            sa.select(player_names.c.name, player_names.c.until_at)
            .where(player_names.c.player_id == player_id)
            .order_by(player_names.c.until_at.desc())
        )
    ).all()
    return [PastName(row.name, row.until_at) for row in rows]


class PlayerStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._rng = random.Random(secrets.randbits(64))

    # ------------------------------------------------------------ new players

    async def create(
        self, key_hash: str, now: float, *, bot: bool = False, label: str | None = None
    ) -> Player:
        """A new anonymous player (a guest name) holding the key `key_hash`."""
        for attempt in range(GUEST_ATTEMPTS):
            name = guest_name(self._rng, attempt, bot=bot)
            player_id = new_player_id()
            try:
                async with self.engine.begin() as db:
                    await db.execute(
                        players.insert().values(
                            id=player_id,
                            name=name,
                            name_key=name_key(name),
                            is_bot=bot,
                            password_hash=None,
                            created_at=now,
                            claimed_at=None,
                            last_seen_at=now,
                        )
                    )
                    await self._insert_key(db, player_id, key_hash, label, now)
            except IntegrityError:
                continue  # the guest name (or, once in 2^64, the id) is taken: another
            return Player(player_id, name, bot, False, now, now)
        raise RuntimeError("no free guest name found")

    # ------------------------------------------------------------ finding players

    async def key_holder(self, key_hash: str) -> tuple[Player, float] | None:
        """The player a device key signs in, and when the key's use was last noted
        (`note_use` is due SEEN_EVERY after it); a read only, which waits for no writer
        (a snapshot: on SQLite, any other transaction takes the write lock first)."""
        async with snapshot(self.engine) as db:
            row = (
                await db.execute(
                    sa.select(*_COLUMNS, player_keys.c.last_used_at)
                    .join(player_keys, player_keys.c.player_id == players.c.id)
                    .where(player_keys.c.key_hash == key_hash)
                )
            ).first()
        return None if row is None else (_player(row), row.last_used_at)

    async def note_use(self, key_hash: str, player_id: str, now: float) -> None:
        """Note that the key was used now (its device's `last_used_at`, the player's
        `last_seen_at`)."""
        async with self.engine.begin() as db:
            await db.execute(
                player_keys.update()
                .where(player_keys.c.key_hash == key_hash)
                .values(last_used_at=now)
            )
            await db.execute(
                players.update().where(players.c.id == player_id).values(last_seen_at=now)
            )

    async def by_id(self, player_id: str) -> Player | None:
        async with snapshot(self.engine) as db:
            return await player_in(db, player_id)

    async def by_ids(self, ids: Iterable[str]) -> dict[str, Player]:
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        async with snapshot(self.engine) as db:
            rows = (await db.execute(sa.select(*_COLUMNS).where(players.c.id.in_(wanted)))).all()
        return {row.id: _player(row) for row in rows}

    async def by_name(self, name: str) -> Player | None:
        """The player called `name` now, whatever the case it is typed in."""
        if not storable(name):
            return None  # no player's name (records/names.py)
        async with snapshot(self.engine) as db:
            row = (
                await db.execute(sa.select(*_COLUMNS).where(players.c.name_key == name_key(name)))
            ).first()
        return None if row is None else _player(row)

    async def by_former_name(self, name: str) -> Player | None:
        """The player who gave up `name` (any case) last, as they are now; None if nobody
        ever had it. Asked when nobody has it now: a link under an earlier name."""
        if not storable(name):
            return None
        async with snapshot(self.engine) as db:
            row = (
                await db.execute(
                    sa.select(*_COLUMNS)
                    .join(player_names, player_names.c.player_id == players.c.id)
                    .where(player_names.c.name_key == name_key(name))
                    .order_by(player_names.c.until_at.desc())
                    .limit(1)
                )
            ).first()
        return None if row is None else _player(row)

    async def password_of(self, name: str) -> tuple[Player, str | None] | None:
        """The player called `name` and their password's hash (None: not claimed)."""
        if not storable(name):
            return None
        async with snapshot(self.engine) as db:
            row = (
                await db.execute(sa.select(*_COLUMNS).where(players.c.name_key == name_key(name)))
            ).first()
        return None if row is None else (_player(row), row.password_hash)

    # ------------------------------------------------------------ names

    async def rename(self, player_id: str, name: str, now: float) -> Player:
        """Call the player `name` from now on; the old name goes into the history. A
        change of case only is a rename too (the key stays the player's). The player's row
        is locked from the read of the old name on (PostgreSQL; SQLite has one writer), so
        that two renames at once each keep the name the other left, not both the same."""
        try:
            async with self.engine.begin() as db:
                old = (
                    await db.execute(
                        sa.select(players.c.name).where(players.c.id == player_id).with_for_update()
                    )
                ).scalar_one_or_none()
                if old is None:
                    raise UnknownPlayer(player_id)
                if old == name:
                    return await self._get(db, player_id)
                await db.execute(
                    players.update()
                    .where(players.c.id == player_id)
                    .values(name=name, name_key=name_key(name))
                )
                await db.execute(
                    player_names.insert().values(
                        player_id=player_id, name=old, name_key=name_key(old), until_at=now
                    )
                )
                return await self._get(db, player_id)
        except IntegrityError:
            raise NameTaken(name) from None

    async def names(self, player_id: str) -> list[PastName]:
        """The player's earlier names, the latest first."""
        async with snapshot(self.engine) as db:
            return await names_in(db, player_id)

    # ------------------------------------------------------------ claiming, devices

    async def claim(
        self, player_id: str, password_hash: str, now: float, asking_hash: str | None = None
    ) -> Player:
        """Give the account its password (once: AlreadyClaimed after), asked for by the
        device holding `asking_hash` (when given): KeySignedOut, unclaimed, when that key
        was signed out meanwhile (`_still_held`): whoever holds it would own the account."""
        async with self.engine.begin() as db:
            if asking_hash is not None:
                await self._still_held(db, player_id, asking_hash)
            done = await db.execute(
                players.update()
                .where(players.c.id == player_id, players.c.password_hash.is_(None))
                .values(password_hash=password_hash, claimed_at=now)
            )
            if done.rowcount == 0:
                if await self._exists(db, player_id):
                    raise AlreadyClaimed(player_id)
                raise UnknownPlayer(player_id)
            return await self._get(db, player_id)

    async def add_key(
        self, player_id: str, key_hash: str, now: float, label: str | None = None
    ) -> None:
        """Another device signs in as the player with this key."""
        async with self.engine.begin() as db:
            if not await self._exists(db, player_id):
                raise UnknownPlayer(player_id)
            await self._insert_key(db, player_id, key_hash, label, now)

    async def revoke_key(self, key_hash: str) -> bool:
        """Sign that device out: its key signs nobody in any more. Whether it did."""
        async with self.engine.begin() as db:
            done = await db.execute(player_keys.delete().where(player_keys.c.key_hash == key_hash))
        return bool(done.rowcount)

    async def devices(self, player_id: str) -> list[Device]:
        """The devices holding the player's keys, the latest used first."""
        async with snapshot(self.engine) as db:
            rows = (
                await db.execute(
                    sa.select(
                        player_keys.c.key_hash,
                        player_keys.c.label,
                        player_keys.c.created_at,
                        player_keys.c.last_used_at,
                    )
                    .where(player_keys.c.player_id == player_id)
                    .order_by(player_keys.c.last_used_at.desc(), player_keys.c.created_at.desc())
                )
            ).all()
        return [
            Device(device_id(row.key_hash), row.label, row.created_at, row.last_used_at)
            for row in rows
        ]

    async def revoke_device(self, player_id: str, device: str, asking_hash: str) -> bool:
        """Sign out the player's device of that id (another player's is not found), and
        void the player's unused link codes: one made on that device would bring it back.
        Whether it did. Asked by the device holding `asking_hash`: KeySignedOut when that
        key was signed out meanwhile (`_still_held`)."""
        async with self.engine.begin() as db:
            await self._still_held(db, player_id, asking_hash)
            hashes = (
                await db.execute(
                    sa.select(player_keys.c.key_hash).where(player_keys.c.player_id == player_id)
                )
            ).scalars()
            found = next((h for h in hashes if device_id(h) == device), None)
            if found is None:
                return False
            done = await db.execute(
                player_keys.delete().where(
                    player_keys.c.key_hash == found, player_keys.c.player_id == player_id
                )
            )
            await db.execute(link_codes.delete().where(link_codes.c.player_id == player_id))
        return bool(done.rowcount)

    async def revoke_other_keys(self, player_id: str, keep_hash: str) -> int:
        """Sign out every device of the player but the one holding `keep_hash`, and void
        their unused link codes; how many devices. KeySignedOut when `keep_hash` itself was
        signed out meanwhile (`_still_held`)."""
        async with self.engine.begin() as db:
            await self._still_held(db, player_id, keep_hash)
            return await self._revoke_others(db, player_id, keep_hash)

    async def password_hash(self, player_id: str) -> str | None:
        """The hash of the player's password (None: not claimed, or no such player)."""
        async with snapshot(self.engine) as db:
            found = await db.scalar(
                sa.select(players.c.password_hash).where(players.c.id == player_id)
            )
        return None if found is None else str(found)

    async def change_password(
        self, player_id: str, old_hash: str, new_hash: str, keep_hash: str
    ) -> int:
        """Replace the password whose hash was read (`old_hash`; PasswordChanged if it was
        changed since) and sign out every device but the one holding `keep_hash`, as one
        change; how many devices were signed out. KeySignedOut (nothing changed) when
        `keep_hash` was signed out meanwhile (`_still_held`)."""
        async with self.engine.begin() as db:
            await self._still_held(db, player_id, keep_hash)
            done = await db.execute(
                players.update()
                .where(players.c.id == player_id, players.c.password_hash == old_hash)
                .values(password_hash=new_hash)
            )
            if done.rowcount == 0:
                raise PasswordChanged(player_id)
            return await self._revoke_others(db, player_id, keep_hash)

    async def key_count(self, player_id: str) -> int:
        async with snapshot(self.engine) as db:
            count = await db.scalar(
                sa.select(sa.func.count()).where(player_keys.c.player_id == player_id)
            )
        return int(count or 0)

    # ------------------------------------------------------------ link codes

    async def add_link_code(
        self, player_id: str, code_hash: str, expires_at: float, asking_hash: str | None = None
    ) -> None:
        """A link code for the player, asked for by the device holding `asking_hash` (when
        given): KeySignedOut, and no code, when that key was signed out meanwhile, since
        the code would bring the device back (`_still_held`)."""
        async with self.engine.begin() as db:
            if asking_hash is not None:
                await self._still_held(db, player_id, asking_hash)
            await db.execute(
                link_codes.insert().values(
                    code_hash=code_hash, player_id=player_id, expires_at=expires_at
                )
            )

    async def use_link_code(
        self, code_hash: str, key_hash: str, now: float, label: str | None = None
    ) -> Player | None:
        """The player a link code was made for, with `key_hash` now a key of theirs; the
        code is used up. None when the code is unknown, used or expired. Expired codes
        of anyone are deleted on the way."""
        async with self.engine.begin() as db:
            await db.execute(link_codes.delete().where(link_codes.c.expires_at <= now))
            player_id = (
                await db.execute(
                    link_codes.delete()
                    .where(link_codes.c.code_hash == code_hash)
                    .returning(link_codes.c.player_id)
                )
            ).scalar_one_or_none()
            if player_id is None:
                return None
            await self._insert_key(db, player_id, key_hash, label, now)
            return await self._get(db, player_id)

    # ------------------------------------------------------------ helpers

    @staticmethod
    async def _insert_key(
        db: AsyncConnection, player_id: str, key_hash: str, label: str | None, now: float
    ) -> None:
        await db.execute(
            player_keys.insert().values(
                key_hash=key_hash,
                player_id=player_id,
                created_at=now,
                last_used_at=now,
                label=label,
            )
        )

    @staticmethod
    async def _still_held(db: AsyncConnection, player_id: str, key_hash: str) -> None:
        """Before a device signs others out: the player's key changes are serialised (the
        player's row locked on PostgreSQL; SQLite has one writer), and `key_hash` must still
        be theirs, else KeySignedOut. Two devices signing each other out at once would
        otherwise each be checked before the other's change, and both be out."""
        await db.execute(sa.select(players.c.id).where(players.c.id == player_id).with_for_update())
        held = await db.scalar(
            sa.select(player_keys.c.key_hash).where(
                player_keys.c.key_hash == key_hash, player_keys.c.player_id == player_id
            )
        )
        if held is None:
            raise KeySignedOut(player_id)

    @staticmethod
    async def _revoke_others(db: AsyncConnection, player_id: str, keep_hash: str) -> int:
        done = await db.execute(
            player_keys.delete().where(
                player_keys.c.player_id == player_id, player_keys.c.key_hash != keep_hash
            )
        )
        await db.execute(link_codes.delete().where(link_codes.c.player_id == player_id))
        return int(done.rowcount)

    @staticmethod
    async def _exists(db: AsyncConnection, player_id: str) -> bool:
        found = await db.scalar(sa.select(players.c.id).where(players.c.id == player_id))
        return found is not None

    @staticmethod
    async def _get(db: AsyncConnection, player_id: str) -> Player:
        row = (await db.execute(sa.select(*_COLUMNS).where(players.c.id == player_id))).one()
        return _player(row)
