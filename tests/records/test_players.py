"""The PlayerStore contract, on SQLite and on a real PostgreSQL (the suite starts it)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from records.engine import open_engine
from records.keys import device_id, hash_secret
from records.migrate import upgrade_to_head
from records.players import (
    SEEN_EVERY,
    AlreadyClaimed,
    KeySignedOut,
    NameTaken,
    PasswordChanged,
    Player,
    PlayerStore,
    UnknownPlayer,
)


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[PlayerStore]:
    engine = open_engine(database_url)
    await upgrade_to_head(engine)
    yield PlayerStore(engine)
    await engine.dispose()


async def signed_in(store: PlayerStore, key: str, *, hashed: bool = True) -> Player | None:
    """The player a device key signs in (the key as the client sends it: its hash asked)."""
    found = await store.key_holder(hash_secret(key) if hashed else key)
    return None if found is None else found[0]


async def test_a_new_player_is_anonymous_with_a_guest_name_and_found_by_its_key(
    store: PlayerStore,
) -> None:
    ann = await store.create(hash_secret("key-a"), 10.0)
    assert ann.name.startswith("Guest-") and not ann.claimed and not ann.bot
    assert len(ann.id) == 16
    assert await signed_in(store, "key-a") == ann
    assert await signed_in(store, "key-b") is None
    assert await signed_in(store, "key-a", hashed=False) is None  # the key itself is never stored
    assert await store.by_id(ann.id) == ann
    bot = await store.create(hash_secret("key-bot"), 10.0, bot=True)
    assert bot.bot and bot.name.startswith("Bot-")
    assert set(await store.by_ids([ann.id, bot.id, "nobody"])) == {ann.id, bot.id}


async def test_names_are_unique_whatever_the_case_and_the_old_ones_are_kept(
    store: PlayerStore,
) -> None:
    ann = await store.create(hash_secret("a"), 1.0)
    bo = await store.create(hash_secret("b"), 1.0)
    guest = ann.name
    renamed = await store.rename(ann.id, "Ann", 5.0)
    assert renamed.name == "Ann"
    with pytest.raises(NameTaken):
        await store.rename(bo.id, "aNN", 6.0)
    assert (await store.by_id(bo.id)).name == bo.name  # type: ignore[union-attr]
    assert (await store.by_name("ANN")) == renamed
    await store.rename(ann.id, "Annie", 7.0)
    assert [(n.name, n.until_at) for n in await store.names(ann.id)] == [
        ("Ann", 7.0),
        (guest, 5.0),
    ]
    assert await store.by_name("ann") is None  # an old name finds nobody now ...
    await store.rename(bo.id, "ann", 8.0)  # ... and may be taken by another player
    assert (await store.by_name("Ann")).id == bo.id  # type: ignore[union-attr]
    with pytest.raises(UnknownPlayer):
        await store.rename("nobody", "zed", 9.0)


async def test_a_name_given_up_finds_the_player_who_had_it_last(store: PlayerStore) -> None:
    """A link under an earlier name (a race's result, a standings row) leads to the player
    who gave that name up last, whatever the case it is typed in, while nobody has it."""
    ann = await store.create(hash_secret("a"), 1.0)
    bo = await store.create(hash_secret("b"), 1.0)
    guest = ann.name
    assert await store.by_former_name(guest) is None  # ann's name now, not a former one
    await store.rename(ann.id, "Ann", 2.0)
    assert (await store.by_former_name(guest.upper())).id == ann.id  # type: ignore[union-attr]
    await store.rename(ann.id, "Annie", 3.0)
    assert (await store.by_former_name("ANN")).name == "Annie"  # type: ignore[union-attr]
    await store.rename(bo.id, "ann", 4.0)  # taken by another, then given up again
    await store.rename(bo.id, "Bob", 5.0)
    assert (await store.by_former_name("ann")).id == bo.id  # type: ignore[union-attr]
    assert await store.by_former_name("nobody") is None
    assert await store.by_former_name("ann\x00") is None  # no name a player could have


async def test_renames_at_once_keep_every_earlier_name_once(store: PlayerStore) -> None:
    """One player renamed from two devices at the same moment: each rename moves the name
    it found into the history, so no name is kept twice and none is lost."""
    ann = await store.create(hash_secret("a"), 1.0)
    given = [ann.name]
    for turn in range(5):
        pair = [f"a{turn}", f"b{turn}"]
        await asyncio.gather(*(store.rename(ann.id, name, 2.0 + turn) for name in pair))
        now = (await store.by_id(ann.id)).name  # type: ignore[union-attr]
        given += [name for name in pair if name != now] + [now]
    past = [n.name for n in await store.names(ann.id)]
    assert sorted(past) == sorted(given[:-1])


async def test_claiming_once_and_the_password_hash_by_name(store: PlayerStore) -> None:
    ann = await store.rename((await store.create(hash_secret("a"), 1.0)).id, "ann", 1.0)
    assert await store.password_of("ANN") == (ann, None)
    claimed = await store.claim(ann.id, "$argon2id$stored", 2.0)
    assert claimed.claimed
    with pytest.raises(AlreadyClaimed):
        await store.claim(ann.id, "$argon2id$other", 3.0)
    assert await store.password_of("ann") == (claimed, "$argon2id$stored")
    assert await store.password_of("nobody") is None
    with pytest.raises(UnknownPlayer):
        await store.claim("nobody", "x", 3.0)


async def test_devices_add_and_revoke_keys(store: PlayerStore) -> None:
    ann = await store.create(hash_secret("laptop"), 1.0)
    await store.add_key(ann.id, hash_secret("phone"), 2.0, label="phone")
    assert (await signed_in(store, "phone")).id == ann.id  # type: ignore[union-attr]
    assert await store.key_count(ann.id) == 2
    assert await store.revoke_key(hash_secret("laptop"))
    assert not await store.revoke_key(hash_secret("laptop"))
    assert await signed_in(store, "laptop") is None
    assert await signed_in(store, "phone") is not None
    with pytest.raises(UnknownPlayer):
        await store.add_key("nobody", hash_secret("x"), 1.0)


async def test_a_players_devices_are_listed_and_signed_out_by_id_or_all_but_one(
    store: PlayerStore,
) -> None:
    """Each key is a device, known to its player by a public id drawn from the key's hash
    (neither the key nor the hash): its label, when it began and was last used. Signing
    a device out, or every device but one, voids the player's unused link codes (one made
    on a device signed out would bring it back); nobody else's keys are touched."""
    ann = await store.create(hash_secret("laptop"), 10.0, label="laptop")
    await store.add_key(ann.id, hash_secret("phone"), 20.0, "phone")
    await store.add_key(ann.id, hash_secret("tablet"), 30.0, None)
    bo = await store.create(hash_secret("bo"), 10.0, label="bo's")
    await store.note_use(hash_secret("laptop"), ann.id, 100.0)  # used later than the others
    devices = await store.devices(ann.id)
    assert [(d.label, d.created_at, d.last_used_at) for d in devices] == [
        ("laptop", 10.0, 100.0),  # the latest used first
        (None, 30.0, 30.0),
        ("phone", 20.0, 20.0),
    ]
    ids = {d.label: d.id for d in devices}
    assert ids["phone"] == device_id(hash_secret("phone")) and len(ids["phone"]) == 16
    assert all(i not in (hash_secret(k), k) for i in ids.values() for k in ("phone", "laptop"))
    assert [d.label for d in await store.devices(bo.id)] == ["bo's"]

    await store.add_link_code(ann.id, hash_secret("CODE-0001"), expires_at=1000.0)
    await store.add_link_code(bo.id, hash_secret("CODE-0002"), expires_at=1000.0)
    assert not await store.revoke_device(
        bo.id, ids["phone"], hash_secret("bo")
    )  # not bo's to sign out
    assert not await store.revoke_device(ann.id, "0123456789abcdef", hash_secret("laptop"))
    assert await signed_in(store, "phone") is not None
    assert await store.revoke_device(ann.id, ids["phone"], hash_secret("laptop"))
    assert await signed_in(store, "phone") is None
    assert not await store.revoke_device(ann.id, ids["phone"], hash_secret("laptop"))
    with pytest.raises(KeySignedOut):  # asked by the phone, signed out meanwhile
        await store.revoke_device(ann.id, ids["laptop"], hash_secret("phone"))
    with pytest.raises(KeySignedOut):
        await store.revoke_other_keys(ann.id, hash_secret("phone"))
    with pytest.raises(KeySignedOut):
        await store.add_link_code(ann.id, hash_secret("CODE-0009"), 1000.0, hash_secret("phone"))
    assert await signed_in(store, "laptop") is not None
    assert await store.use_link_code(hash_secret("CODE-0001"), hash_secret("x"), 42.0) is None

    await store.add_key(ann.id, hash_secret("desktop"), 50.0)
    await store.add_link_code(ann.id, hash_secret("CODE-0003"), expires_at=1000.0)
    assert await store.revoke_other_keys(ann.id, hash_secret("laptop")) == 2
    assert [d.label for d in await store.devices(ann.id)] == ["laptop"]
    assert await store.revoke_other_keys(ann.id, hash_secret("laptop")) == 0
    assert await store.use_link_code(hash_secret("CODE-0003"), hash_secret("y"), 52.0) is None
    assert await signed_in(store, "bo") is not None
    linked = await store.use_link_code(hash_secret("CODE-0002"), hash_secret("z"), 53.0)
    assert linked is not None and linked.id == bo.id  # bo's code is still good


async def test_a_new_password_replaces_the_one_read_and_signs_the_other_devices_out(
    store: PlayerStore,
) -> None:
    ann = await store.rename((await store.create(hash_secret("laptop"), 1.0)).id, "ann", 1.0)
    await store.claim(ann.id, "$argon2id$old", 2.0)
    await store.add_key(ann.id, hash_secret("phone"), 3.0)
    await store.add_link_code(ann.id, hash_secret("CODE-0001"), expires_at=1000.0)
    assert await store.password_hash(ann.id) == "$argon2id$old"
    signed_out = await store.change_password(
        ann.id, "$argon2id$old", "$argon2id$new", hash_secret("laptop")
    )
    assert signed_out == 1
    assert (await store.password_of("ann"))[1] == "$argon2id$new"  # type: ignore[index]
    assert await signed_in(store, "phone") is None
    assert await signed_in(store, "laptop") is not None
    assert await store.use_link_code(hash_secret("CODE-0001"), hash_secret("x"), 5.0) is None
    # Changed meanwhile (from another device, after this one read it): nothing changes.
    await store.add_key(ann.id, hash_secret("tablet"), 6.0)
    with pytest.raises(PasswordChanged):
        await store.change_password(ann.id, "$argon2id$old", "$argon2id$3rd", hash_secret("laptop"))
    assert await store.password_hash(ann.id) == "$argon2id$new"
    assert await signed_in(store, "tablet") is not None
    assert await store.password_hash("nobody") is None


async def test_a_key_in_use_moves_last_seen_on(store: PlayerStore) -> None:
    """A key's read answers the player as they were and when the key's use was last
    noted (Accounts notes it again once SEEN_EVERY has passed); noting it moves the
    player's last_seen_at on."""
    ann = await store.create(hash_secret("a"), 1.0)
    found = await store.key_holder(hash_secret("a"))
    assert found is not None
    player, last_used_at = found
    assert (player.last_seen_at, last_used_at) == (1.0, 1.0)
    assert 1000.0 - last_used_at >= SEEN_EVERY
    await store.note_use(hash_secret("a"), ann.id, 1000.0)
    assert (await store.by_id(ann.id)).last_seen_at == 1000.0  # type: ignore[union-attr]


async def test_a_link_code_signs_one_device_in_once_before_it_expires(
    store: PlayerStore,
) -> None:
    ann = await store.create(hash_secret("a"), 1.0)
    await store.add_link_code(ann.id, hash_secret("CODE-0001"), expires_at=100.0)
    await store.add_link_code(ann.id, hash_secret("CODE-0002"), expires_at=100.0)
    linked = await store.use_link_code(hash_secret("CODE-0001"), hash_secret("b"), 50.0)
    assert linked is not None and linked.id == ann.id
    assert (await signed_in(store, "b")).id == ann.id  # type: ignore[union-attr]
    assert await store.use_link_code(hash_secret("CODE-0001"), hash_secret("c"), 51.0) is None
    # Expired: no use, and gone.
    assert await store.use_link_code(hash_secret("CODE-0002"), hash_secret("c"), 100.0) is None
    assert await signed_in(store, "c") is None
