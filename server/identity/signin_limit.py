"""How often a password or a link code may be tried, and a player renamed.

Two budgets: one per client address (every attempt counts: one machine trying many
names), one per player name (failed attempts count: many machines trying one name; a
success refills it). An attempt is counted in both before its password is checked and
goes ahead only when both have room; otherwise it is refused, unchecked, with the
seconds to wait, so that a guesser gets `burst` tries and then one every `interval`
seconds, whatever it sends.

Renames have a budget per player: each keeps the old name in the player's history (and
in every answer that lists it), so a loop of renames would grow them without end.

The budgets are kept by the room store (`RoomStore.take_budget`: a GCRA in Redis), so every
server process behind a balancer spends the same ones. This module decides the numbers
and which budgets an attempt spends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from records.keys import hash_secret

__all__ = ["ADDRESSES", "NAMES", "RENAMES", "Budget", "Budgets", "SignInLimit"]

ADDRESSES = "sign-in-address"  # the budgets' names in the store
NAMES = "sign-in-name"
RENAMES = "rename"


@dataclass(frozen=True, slots=True)
class Budget:
    burst: int  # attempts at once
    interval: float  # then one attempt every so many seconds


class Budgets(Protocol):
    """Where the counts are kept (the room store)."""

    async def take_budget(self, budget: str, who: str, interval: float, burst: float) -> float: ...
    async def refill_budget(self, budget: str, who: str) -> None: ...


def _name(name: str) -> str:
    """A name as its budget is keyed: its case folded, hashed (a name tried may be anything
    a client sends, of any length)."""
    return hash_secret(name.casefold())[:32]


class SignInLimit:
    """`take(address, name)` before checking a password (or a link code: `name` None);
    `succeeded(name)` after a right one."""

    def __init__(
        self,
        budgets: Budgets,
        per_address: Budget = Budget(burst=20, interval=6.0),
        per_name: Budget = Budget(burst=5, interval=30.0),
        renames: Budget = Budget(burst=10, interval=60.0),
    ) -> None:
        self.budgets = budgets
        self.per_address = per_address
        self.per_name = per_name
        self.renames = renames

    async def take(self, address: str | None, name: str | None) -> float:
        """Count this attempt: 0.0 if it may be made now, else the seconds to wait (it is
        refused then). The address's budget first: a refused attempt spends no name's."""
        if address is not None:
            per = self.per_address
            wait = await self.budgets.take_budget(ADDRESSES, address, per.interval, per.burst)
            if wait > 0:
                return wait
        if name is None:
            return 0.0
        per = self.per_name
        return await self.budgets.take_budget(NAMES, _name(name), per.interval, per.burst)

    async def rename(self, player_id: str) -> float:
        """Count a rename of the player: 0.0 if it may be made now, else the seconds to
        wait (it is refused then)."""
        per = self.renames
        return await self.budgets.take_budget(RENAMES, player_id, per.interval, per.burst)

    async def succeeded(self, name: str | None) -> None:
        """The right password for `name`: its budget is full again (failures alone count)."""
        if name is not None:
            await self.budgets.refill_budget(NAMES, _name(name))
