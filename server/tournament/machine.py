"""A tournament as a pure state machine: registration, the organiser's start and pause,
the clock, the deals, the races (heats) it opens and what they scored.

Sans-I/O like server/room/race.py: every method takes the current time (`now`, Unix seconds)
and changes the state or raises `TourError` (nothing changed). Nothing here reads a clock,
awaits or stores; server/tournament/runner.py feeds it (the organiser's and players'
requests, the clock, the races' results, drawn deals) and carries out what it asks for:
a `Heat` with no room yet is a race to open, with its seed and its players.

What differs between Rounds, Arena and Knockout is their format's class
(server/tournament/formats.py, `Tournament.format`); what they share is here.

Deals come in through `add_seeds` (the runner draws them beforehand, with the solver when
the tournament deals winnable deals only); a round that is due waits for its deal.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import protocol as p
from protocol import ErrorCode
from server.room.ids import NAME_MOST
from server.tournament.formats import TourFormat, tour_format
from server.tournament.model import Entrant, Heat, Match, Player, Status, TourConfig, TourError
from server.tournament.scoring import RaceResult

__all__ = ["Tournament"]


@dataclass(slots=True)
class Tournament:
    id: str
    config: TourConfig
    organiser_hash: str
    created_at: float
    status: Status = Status.REGISTRATION
    players: list[Player] = field(default_factory=list)
    round: int = 0  # the round (Arena: wave) last begun
    racing: bool = False  # Rounds/Knockout: a round is being raced
    paused: bool = False
    next_at: float | None = None  # the next round (Arena: wave) is due
    started_at: float | None = None
    ends_at: float | None = None  # Arena: no heat is paired after this
    finished_at: float | None = None
    heats: list[Heat] = field(default_factory=list)
    matches: list[Match] = field(default_factory=list)
    seeds: dict[str, list[int]] = field(default_factory=dict)  # drawn deals, per game
    round_seeds: dict[int, int] = field(default_factory=dict)  # Rounds: round -> its deal
    waiting: list[int] = field(default_factory=list)  # Arena: free, left out of the last pairing

    # ------------------------------------------------------------ registration

    def register(
        self,
        name: str,
        token_hash: str,
        now: float,
        entrant: Entrant | None = None,
    ) -> Player:
        """A new player; `entrant`: the registering player's, one registration each."""
        if self.status is not Status.REGISTRATION:
            raise TourError(ErrorCode.REGISTRATION_CLOSED, "registration closed at the start")
        if len(self.players) >= self.config.max_players:
            raise TourError(ErrorCode.TOURNAMENT_FULL, "the tournament is full")
        if not name:
            raise TourError(ErrorCode.BAD_NAME, "a player needs a name")
        if len(name) > NAME_MOST:  # the name of their seat in every race
            raise TourError(
                ErrorCode.BAD_NAME, f"a player's name is at most {NAME_MOST} characters"
            )
        if entrant is not None and any(p.account == entrant.account for p in self.players):
            raise TourError(ErrorCode.ALREADY_JOINED, "you are registered here already")
        if any(p.name.casefold() == name.casefold() for p in self.players):
            raise TourError(ErrorCode.NAME_TAKEN, f"the name {name!r} is taken here")
        player = Player(len(self.players), name, token_hash, now)
        if entrant is not None:
            player.account, player.bot = entrant.account, entrant.bot
            player.rating, player.provisional = entrant.rating, entrant.provisional
        self.players.append(player)
        return player

    def withdraw(self, pid: int, now: float) -> bool:
        """Leave for now: no new races, the score stays, `come_back` undoes it. Again
        changes nothing. Whether it changed anything."""
        player = self.player(pid)
        self._not_over()
        changed = not player.withdrawn
        player.withdrawn = True
        return changed

    def come_back(self, pid: int, now: float) -> bool:
        """Race again from the next round (Arena: wave); a player who has not withdrawn
        is back already. Whether it changed anything."""
        player = self.player(pid)
        self._not_over()
        if player.removed:
            raise TourError(ErrorCode.REMOVED, "the organiser removed you from this tournament")
        if player.out_round is not None:
            raise TourError(ErrorCode.TOURNAMENT_OVER, "you are out of this knockout")
        changed = player.withdrawn
        player.withdrawn = False
        return changed

    def remove(self, pid: int, now: float) -> bool:
        """The organiser's decision: no more races; ranked last; cannot come back. Again
        changes nothing. Whether it changed anything."""
        player = self.player(pid)
        self._not_over()
        changed = not player.removed
        player.removed = True
        return changed

    def _not_over(self) -> None:
        if self.status is Status.FINISHED:
            raise TourError(ErrorCode.TOURNAMENT_OVER, "the tournament is over")

    def player(self, pid: int) -> Player:
        if not 0 <= pid < len(self.players):
            raise TourError(ErrorCode.UNKNOWN_PLAYER, f"there is no player {pid}")
        return self.players[pid]

    def player_by_name(self, name: str) -> Player:
        for player in self.players:
            if player.name.casefold() == name.casefold():
                return player
        raise TourError(ErrorCode.UNKNOWN_PLAYER, f"there is no player named {name!r}")

    # ------------------------------------------------------------ the organiser

    @property
    def format(self) -> TourFormat[Any]:
        return tour_format(self.config.format)

    def start(self, now: float) -> None:
        self._not_over()
        if self.status is Status.RUNNING:
            raise TourError(ErrorCode.ALREADY_STARTED, "the tournament has started already")
        need = self.format.min_players
        if sum(p.active for p in self.players) < need:
            needed = "1 active player is" if need == 1 else f"{need} active players are"
            raise TourError(ErrorCode.NOT_ENOUGH_PLAYERS, f"at least {needed} needed to start")
        self.status = Status.RUNNING
        self.started_at = now
        # A pause before the start holds the first round (Arena: the first pairing).
        self.next_at = None if self.paused else now
        self.format.started(self, now)

    def pause(self, now: float) -> bool:
        """No new round (Arena: no new heat) until `resume`; what is raced goes on.
        Whether it changed anything (paused already: no)."""
        self._not_over()
        if self.paused:
            return False
        self.paused = True
        self.format.paused(self)
        return True

    def resume(self, now: float) -> bool:
        """Whether it changed anything (not paused: no)."""
        self._not_over()
        if not self.paused:
            return False
        self.paused = False
        if self.status is Status.RUNNING:
            self.format.resumed(self, now)
        return True

    # ------------------------------------------------------------ the clock

    def next_deadline(self) -> float | None:
        """When `tick` next has something to do (live heats are watched besides)."""
        if self.status is not Status.RUNNING:
            return None
        return self.format.deadline(self)

    def tick(self, now: float) -> bool:
        """Do what is due at `now`; True if anything changed. Idempotent."""
        if self.status is not Status.RUNNING:
            return False
        return self.format.tick(self, now)

    def end_round(self, now: float) -> None:
        """The round (Rounds, Knockout) is decided: the break, or the end."""
        self.racing = False
        if self.format.over_after_round(self):
            self.finish(now)
            return
        self.next_at = None if self.paused else now + self.config.pause

    def finish(self, now: float) -> None:
        self.status = Status.FINISHED
        self.finished_at = now
        self.next_at = None

    # ------------------------------------------------------------ deals and heats

    def game_for(self, round_: int) -> str:
        """The game round (Arena: wave) `round_` deals: the games in turn."""
        return self.config.games[(round_ - 1) % len(self.config.games)]

    def raced_deals(self) -> list[tuple[int, int]]:
        """(round, seed) of every Rounds round raced to its end: a deal is public only
        then (while it is raced, knowing it would let anyone look up its solution)."""
        return [
            (r, seed)
            for r, seed in sorted(self.round_seeds.items())
            if not any(h.live for h in self.heats if h.round == r)
        ]

    def _on_its_deal(self, heat: Heat) -> list[Heat]:
        """The other heats on `heat`'s deal (a Rounds round's heats share one)."""
        deal = (heat.game, heat.seed)
        return [h for h in self.heats if h is not heat and (h.game, h.seed) == deal]

    def deal_shared(self, heat: Heat) -> bool:
        """Other heats race `heat`'s deal (a Rounds round in several heats)."""
        return bool(self._on_its_deal(heat))

    def deal_raced(self, heat: Heat) -> bool:
        """No heat but `heat` still races its deal. Only then is anything of a finished
        heat shown: its deal, its line, its result. A racer of another heat could copy its
        line, and a round's places (so its points) come from all its heats together."""
        return not any(h.live for h in self._on_its_deal(heat))

    def shown_heats(self) -> list[Heat]:
        """The finished heats whose deal has been raced to its end, in order."""
        return [h for h in self.heats if not h.live and self.deal_raced(h)]

    def add_seeds(self, game: str, seeds: list[int]) -> bool:
        """Deals drawn by the runner, up to what is wanted now."""
        want = self.seeds_wanted().get(game, 0)
        if want <= 0:
            return False
        self.seeds.setdefault(game, []).extend(seeds[:want])
        return True

    def seeds_wanted(self) -> dict[str, int]:
        """game -> deals to draw now (so that a round or wave does not wait for the solver)."""
        if self.status is Status.FINISHED:
            return {}
        needed = self.format.deals_needed(self)
        return {g: n - len(self.seeds.get(g, [])) for g, n in needed.items()}

    def take_seed(self, game: str) -> int | None:
        pool = self.seeds.get(game)
        return pool.pop(0) if pool else None

    def open_heat(self, round_: int, game: str, seed: int, players: list[int], now: float) -> Heat:
        """A race to open (the runner opens its room)."""
        heat = Heat(len(self.heats), round_, game, seed, players, now)
        self.heats.append(heat)
        return heat

    def live_heats(self) -> list[Heat]:
        return [h for h in self.heats if h.live]

    def heat_opened(self, heat_id: int) -> bool:
        """The runner opened the heat's room: its players may go there now."""
        heat = self.heats[heat_id]
        if heat.opened:
            return False
        heat.opened = True
        return True

    def heat_finished(self, heat_id: int, results: list[RaceResult], now: float) -> bool:
        """A heat's race ended with these results (one per player of the heat)."""
        if not 0 <= heat_id < len(self.heats):
            raise TourError(ErrorCode.NOT_FOUND, f"no heat {heat_id}")
        heat = self.heats[heat_id]
        if not heat.live:
            return False  # told twice (two processes saw the end): once counts
        if sorted(r.player for r in results) != sorted(heat.players):
            raise TourError(ErrorCode.BAD_REQUEST, "results must name each player of the heat")
        heat.results = list(results)
        self.format.heat_finished(self, heat, now)
        return True

    # ------------------------------------------------------------ standings

    def standings(self) -> list[p.Standing]:
        """Every player, best first, with `rank` (shared when equal) and the format's
        columns. Removed players come last."""
        return self.format.standings(self)

    def active_by_standing(self) -> list[int]:
        """Active players, leaders first (Rounds groups heats so, Arena pairs leaders)."""
        active = {p.id for p in self.players if p.active}
        return [row["player"] for row in self.standings() if row["player"] in active]

    def player_ids(self) -> list[int]:
        return [p.id for p in self.players]

    def removed_ids(self) -> set[int]:
        return {p.id for p in self.players if p.removed}

    def status_of(self, pid: int) -> str:
        player = self.players[pid]
        return "removed" if player.removed else "withdrawn" if player.withdrawn else "active"

    def champion(self) -> int | None:
        """The Knockout's winner once it is over (None: no champion, or another format)."""
        if self.status is not Status.FINISHED:
            return None
        return self.format.champion(self)

    # ------------------------------------------------------------ storage form

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "config": {**dataclasses.asdict(self.config), "games": list(self.config.games)},
            "organiser_hash": self.organiser_hash,
            "created_at": self.created_at,
            "status": self.status.value,
            "players": [dataclasses.asdict(p) for p in self.players],
            "round": self.round,
            "racing": self.racing,
            "paused": self.paused,
            "next_at": self.next_at,
            "started_at": self.started_at,
            "ends_at": self.ends_at,
            "finished_at": self.finished_at,
            "heats": [
                {
                    **{k: getattr(h, k) for k in _HEAT_FIELDS if k != "results"},
                    "results": None if h.results is None else [r.to_dict() for r in h.results],
                }
                for h in self.heats
            ],
            "matches": [dataclasses.asdict(m) for m in self.matches],
            "seeds": self.seeds,
            "round_seeds": {str(k): v for k, v in self.round_seeds.items()},
            "waiting": self.waiting,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tournament:
        config = dict(data["config"])
        config["games"] = tuple(config["games"])
        heats = []
        for h in data["heats"]:
            values = dict(h)
            results = values.pop("results")
            heat = Heat(**values)
            heat.results = None if results is None else [RaceResult.from_dict(r) for r in results]
            heats.append(heat)
        return cls(
            id=data["id"],
            config=TourConfig(**config),
            organiser_hash=data["organiser_hash"],
            created_at=data["created_at"],
            status=Status(data["status"]),
            players=[Player(**p) for p in data["players"]],
            round=data["round"],
            racing=data["racing"],
            paused=data["paused"],
            next_at=data["next_at"],
            started_at=data["started_at"],
            ends_at=data["ends_at"],
            finished_at=data["finished_at"],
            heats=heats,
            matches=[Match(**m) for m in data["matches"]],
            seeds={g: list(s) for g, s in data["seeds"].items()},
            round_seeds={int(k): v for k, v in data["round_seeds"].items()},
            waiting=list(data.get("waiting", [])),
        )


_HEAT_FIELDS = tuple(f.name for f in dataclasses.fields(Heat))
