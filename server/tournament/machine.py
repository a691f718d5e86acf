"""A tournament as a pure state machine: registration, rounds, arena waves, a knockout
bracket, and what the races they open scored.

Sans-I/O like server/room/race.py: every method takes the current time (`now`, Unix seconds)
and changes the state or raises `TourError` (nothing changed). Nothing here reads a clock,
awaits or stores; server/tournament/runner.py feeds it (the organiser's and players'
requests, the clock, the races' results, drawn deals) and carries out what it asks for:
a `Heat` with no room yet is a race to open, with its seed and its players.

Deals come in through `add_seeds` (the runner draws them beforehand, with the solver when
the tournament deals winnable deals only); a round that is due waits for its deal.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from dataclasses import dataclass, field
from typing import Any

from protocol import ErrorCode
from server.tournament.scoring import (
    RaceResult,
    arena_standings,
    knockout_standings,
    knockout_winner,
    rounds_standings,
)

__all__ = [
    "FORMATS",
    "Heat",
    "Match",
    "Player",
    "Status",
    "TourConfig",
    "TourError",
    "Tournament",
    "bracket_order",
]

FORMATS = ("rounds", "arena", "knockout")


class TourError(Exception):
    """A request the tournament refuses; nothing changed."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Status(enum.StrEnum):
    REGISTRATION = "registration"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class TourConfig:
    """What the organiser chose; fixed once the tournament is created."""

    name: str
    format: str = "rounds"
    games: tuple[str, ...] = ("shaula",)  # played in turn: round (or heat) k deals games[k]
    rounds: int = 3  # Rounds format
    duration: float = 600.0  # Arena: seconds from the start in which heats are paired
    time_limit: float = 300.0  # seconds per race
    winnable: bool = True  # deals proved winnable by the solver
    spectator_delay: float = 10.0
    max_players: int = 64
    seats: int = 8  # most racers in one room (a heat)
    arena_heat: int = 4  # Arena: players per heat when enough are free (2..seats)
    wave: float = 5.0  # Arena: seconds between pairings of the free players
    pause: float = 30.0  # Rounds, Knockout: the break between rounds
    countdown: float = 5.0  # a heat's room counts down this long before its race
    grace: float = 60.0  # a racer whose connection drops keeps their seat this long


@dataclass(slots=True)
class Player:
    id: int
    name: str
    token_hash: str
    registered_at: float
    withdrawn: bool = False
    removed: bool = False
    out_round: int | None = None  # Knockout: the round they lost (None: still in)

    @property
    def active(self) -> bool:
        return not self.withdrawn and not self.removed


@dataclass(slots=True)
class Heat:
    """One race of the tournament: a room with these players on this deal."""

    id: int  # 0, 1, 2 ... in the order they were opened; the room is f"{tour}-{id}"
    round: int  # Rounds/Knockout: its round; Arena: its wave
    game: str
    seed: int
    players: list[int]
    opened_at: float
    match: int | None = None  # Knockout: the match it decides
    opened: bool = False  # its room exists (players are sent there only then)
    results: list[RaceResult] | None = None  # None while it is raced

    @property
    def live(self) -> bool:
        return self.results is None


@dataclass(slots=True)
class Match:
    """Knockout: two players (or one, a bye), in `round` at `slot` of the bracket."""

    id: int
    round: int
    slot: int
    a: int | None
    b: int | None
    winner: int | None = None  # None once settled: nobody goes through (both withdrew)
    how: str | None = None  # "race", "bye", "walkover"; None while undecided

    @property
    def settled(self) -> bool:
        return self.how is not None


# Knockout: a match whose last this many races were tied with neither player moving is
# decided without another (for the better seed): two no-shows would tie for ever.
NO_SHOW_RACES = 2


def bracket_order(size: int) -> list[int]:
    """Seeds 1..size in bracket order (size a power of two): 1 meets size, and the two
    best seeds can only meet in the final. [1, 8, 4, 5, 2, 7, 3, 6] for 8."""
    order = [1]
    while len(order) < size:
        n = len(order) * 2
        order = [x for seed in order for x in (seed, n + 1 - seed)]
    return order


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

    # ------------------------------------------------------------ registration

    def register(self, name: str, token_hash: str, now: float) -> Player:
        if self.status is not Status.REGISTRATION:
            raise TourError(ErrorCode.REGISTRATION_CLOSED, "registration closed at the start")
        if len(self.players) >= self.config.max_players:
            raise TourError(ErrorCode.TOURNAMENT_FULL, "the tournament is full")
        if not name:
            raise TourError(ErrorCode.BAD_REQUEST, "a player needs a name")
        if any(p.name.casefold() == name.casefold() for p in self.players):
            raise TourError(ErrorCode.NAME_TAKEN, f"the name {name!r} is taken here")
        player = Player(len(self.players), name, token_hash, now)
        self.players.append(player)
        return player

    def withdraw(self, pid: int, now: float) -> None:
        """Leave for now: no new races, the score stays, `come_back` undoes it."""
        player = self.player(pid)
        if self.status is Status.FINISHED:
            raise TourError(ErrorCode.TOURNAMENT_OVER, "the tournament is over")
        player.withdrawn = True

    def come_back(self, pid: int, now: float) -> None:
        player = self.player(pid)
        if self.status is Status.FINISHED:
            raise TourError(ErrorCode.TOURNAMENT_OVER, "the tournament is over")
        if player.removed:
            raise TourError(ErrorCode.REMOVED, "the organiser removed you from this tournament")
        if player.out_round is not None:
            raise TourError(ErrorCode.TOURNAMENT_OVER, "you are out of this knockout")
        player.withdrawn = False

    def remove(self, pid: int, now: float) -> None:
        """The organiser's decision: no more races; ranked last; cannot come back."""
        player = self.player(pid)
        player.removed = True

    def player(self, pid: int) -> Player:
        if not 0 <= pid < len(self.players):
            raise TourError(ErrorCode.NOT_PLAYER, f"there is no player {pid}")
        return self.players[pid]

    def player_by_name(self, name: str) -> Player:
        for player in self.players:
            if player.name.casefold() == name.casefold():
                return player
        raise TourError(ErrorCode.NOT_PLAYER, f"there is no player named {name!r}")

    # ------------------------------------------------------------ the organiser

    def start(self, now: float) -> None:
        if self.status is not Status.REGISTRATION:
            raise TourError(ErrorCode.NOT_RUNNING, "the tournament has started already")
        need = 1 if self.config.format == "rounds" else 2
        if sum(p.active for p in self.players) < need:
            raise TourError(ErrorCode.NOT_ENOUGH_PLAYERS, f"at least {need} players are needed")
        self.status = Status.RUNNING
        self.started_at = self.next_at = now
        if self.config.format == "arena":
            self.ends_at = now + self.config.duration
        if self.config.format == "knockout":
            self._draw_bracket()

    def pause(self, now: float) -> None:
        """No new round (Arena: no new heat) until `resume`; what is raced goes on."""
        if self.status is Status.FINISHED:
            raise TourError(ErrorCode.TOURNAMENT_OVER, "the tournament is over")
        self.paused = True
        if not self.racing and self.config.format != "arena":
            self.next_at = None

    def resume(self, now: float) -> None:
        if not self.paused:
            return
        self.paused = False
        if self.status is Status.RUNNING and not self.racing:
            self.next_at = now + (self.config.pause if self.round else 0.0)
        if self.config.format == "arena" and self.status is Status.RUNNING:
            self.next_at = now

    # ------------------------------------------------------------ the clock

    def next_deadline(self) -> float | None:
        """When `tick` next has something to do (live heats are watched besides)."""
        if self.status is not Status.RUNNING:
            return None
        times = [t for t in (self.next_at, self.ends_at) if t is not None]
        if self.config.format == "arena" and self.ends_at is not None and self.paused:
            times = [self.ends_at]
        return min(times) if times else None

    def tick(self, now: float) -> bool:
        """Do what is due at `now`; True if anything changed. Idempotent."""
        if self.status is not Status.RUNNING:
            return False
        if self.config.format == "arena":
            return self._tick_arena(now)
        changed = False
        if self.config.format == "knockout":
            changed = self._replay_ties(now)
        if self.racing or self.paused or self.next_at is None or now < self.next_at:
            return changed
        if self.config.format == "rounds":
            return self._begin_round(now) or changed
        return self._begin_knockout_round(now) or changed

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
        needed: dict[str, int] = {}
        games = self.config.games
        fmt = self.config.format
        if fmt == "rounds":
            if self.round < self.config.rounds:
                game = games[self.round % len(games)]
                needed[game] = 1
        elif fmt == "arena":
            per_wave = max(1, math.ceil(sum(p.active for p in self.players) / 2))
            game = games[self.round % len(games)]
            needed[game] = per_wave
        else:
            game = games[self.round % len(games)]
            current = games[(self.round - 1) % len(games)] if self.round else game
            needed[game] = max(1, math.ceil(sum(p.out_round is None for p in self.players) / 2))
            needed[current] = max(needed.get(current, 0), 2)  # ties are raced again
        return {g: n - len(self.seeds.get(g, [])) for g, n in needed.items()}

    def _take_seed(self, game: str) -> int | None:
        pool = self.seeds.get(game)
        return pool.pop(0) if pool else None

    def _open(self, round_: int, game: str, seed: int, players: list[int], now: float) -> Heat:
        heat = Heat(len(self.heats), round_, game, seed, players, now)
        self.heats.append(heat)
        return heat

    # ------------------------------------------------------------ rounds

    def _begin_round(self, now: float) -> bool:
        number = self.round + 1
        game = self.config.games[self.round % len(self.config.games)]
        entrants = self._entrants_by_standing()
        if not entrants:
            # Nobody to race (all withdrew): the round passes without a race.
            self.round = number
            self._end_round(now)
            return True
        seed = self._take_seed(game)
        if seed is None:
            return False  # the deal is still being drawn
        self.round = number
        self.round_seeds[number] = seed
        self.racing = True
        self.next_at = None
        for group in split_evenly(entrants, self.config.seats):
            self._open(number, game, seed, group, now)
        return True

    def _entrants_by_standing(self) -> list[int]:
        """Active players, leaders first (heats of a round share the deal: grouping by
        standing only keeps leaders together on screen)."""
        active = {p.id for p in self.players if p.active}
        return [row["player"] for row in self.standings() if row["player"] in active]

    def _end_round(self, now: float) -> None:
        self.racing = False
        last = (
            self.round >= self.config.rounds
            if self.config.format == "rounds"
            else sum(p.out_round is None for p in self.players) <= 1
        )
        if last and self.config.format == "knockout":
            self._complete_bracket()
        if last:
            self.status = Status.FINISHED
            self.finished_at = now
            self.next_at = None
            return
        self.next_at = None if self.paused else now + self.config.pause

    # ------------------------------------------------------------ arena

    def _tick_arena(self, now: float) -> bool:
        assert self.ends_at is not None
        live = self.live_heats()
        if now >= self.ends_at:
            if live:
                return False
            self.status = Status.FINISHED
            self.finished_at = now
            self.next_at = None
            return True
        if self.paused or self.next_at is None or now < self.next_at:
            return False
        busy = {pid for heat in live for pid in heat.players}
        free = [pid for pid in self._arena_order() if pid not in busy]
        self.next_at = now + self.config.wave
        opened = 0
        if len(free) >= 2:
            wave = self.round + 1
            game = self.config.games[self.round % len(self.config.games)]
            for group in arena_groups(free, self.config.arena_heat, self.config.seats):
                seed = self._take_seed(game)
                if seed is None:
                    self.next_at = now  # deals are being drawn: pair the rest soon
                    break
                self._open(wave, game, seed, group, now)
                opened += 1
            if opened:
                self.round = wave
        return True

    def _arena_order(self) -> list[int]:
        """Active players, leaders first: leaders race leaders."""
        active = {p.id for p in self.players if p.active}
        return [row["player"] for row in self.standings() if row["player"] in active]

    # ------------------------------------------------------------ knockout

    def _draw_bracket(self) -> None:
        """Seeds by registration order; byes go to the best seeds (a power of two)."""
        entrants = [p.id for p in self.players if p.active]
        for p in self.players:
            if not p.active:
                p.out_round = 0
        size = 1 << max(1, (len(entrants) - 1).bit_length())
        order = bracket_order(size)
        slot_players = [entrants[s - 1] if s <= len(entrants) else None for s in order]
        for slot in range(size // 2):
            a, b = slot_players[2 * slot], slot_players[2 * slot + 1]
            self.matches.append(Match(len(self.matches), 1, slot, a, b))

    def _begin_knockout_round(self, now: float) -> bool:
        number = self.round + 1
        matches = self._knockout_round(number)
        game = self.config.games[self.round % len(self.config.games)]
        to_race = [m for m in matches if self._settle_without_race(m, number)]
        pool = self.seeds.get(game, [])
        if len(pool) < len(to_race):
            # Undo nothing: byes and walkovers stand; wait for the deals.
            return bool(len(to_race) < len(matches))
        self.round = number
        self.racing = True
        self.next_at = None
        for match in to_race:
            seed = self._take_seed(game)
            assert seed is not None and match.a is not None and match.b is not None
            heat = self._open(number, game, seed, [match.a, match.b], now)
            heat.match = match.id
        if not to_race:
            self._end_knockout_round(now)
        return True

    def _knockout_round(self, number: int) -> list[Match]:
        """Round `number`'s matches, drawn from the winners of the round before (slot k
        meets slot k + 1 of it) the first time they are asked for."""
        matches = [m for m in self.matches if m.round == number]
        if not matches:
            previous = sorted((m for m in self.matches if m.round == number - 1), key=_slot)
            for slot in range(len(previous) // 2):
                a, b = previous[2 * slot].winner, previous[2 * slot + 1].winner
                self.matches.append(Match(len(self.matches), number, slot, a, b))
            matches = [m for m in self.matches if m.round == number]
        return matches

    def _complete_bracket(self) -> None:
        """One player (or nobody) is left before the final: the rounds still to come are
        drawn all the same, each settled by a bye, so the bracket shows them whole."""
        while len([m for m in self.matches if m.round == self.round]) > 1:
            self.round += 1
            for match in self._knockout_round(self.round):
                self._settle_without_race(match, self.round)

    def _settle_without_race(self, match: Match, number: int) -> bool:
        """Byes and walkovers; True if the match must be raced. A withdrawn player never
        goes through: with nobody still in, the match has no winner and both are out."""
        if match.settled:
            return False
        sides = [self.players[pid] for pid in (match.a, match.b) if pid is not None]
        if len(sides) == 2 and all(p.active for p in sides):
            return True
        match.how = "bye" if len(sides) < 2 else "walkover"
        still_in = [p for p in sides if p.active]
        match.winner = still_in[0].id if still_in else None
        for player in sides:
            if player.id != match.winner:
                player.out_round = number
        return False

    def _replay_ties(self, now: float) -> bool:
        """A match whose last race could not part its players gets a new deal."""
        changed = False
        for match in self.matches:
            if match.settled or match.round != self.round or not self.racing:
                continue
            heats = [h for h in self.heats if h.match == match.id]
            if heats and all(not h.live for h in heats):
                if not self._settle_without_race(match, match.round):
                    changed = True  # one withdrew since: a new deal is a race they won't get
                    continue
                game = self.config.games[(self.round - 1) % len(self.config.games)]
                seed = self._take_seed(game)
                if seed is None:
                    continue
                assert match.a is not None and match.b is not None
                heat = self._open(self.round, game, seed, [match.a, match.b], now)
                heat.match = match.id
                changed = True
        if self.racing and all(m.settled for m in self.matches if m.round == self.round):
            self._end_knockout_round(now)
            return True
        if changed and not any(
            not m.settled and not any(h.live for h in self.heats if h.match == m.id)
            for m in self.matches
            if m.round == self.round
        ):
            self.next_at = None
        return changed

    def _end_knockout_round(self, now: float) -> None:
        self._end_round(now)

    # ------------------------------------------------------------ results

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
        fmt = self.config.format
        if fmt == "rounds":
            if self.racing and not any(h.live for h in self.heats if h.round == self.round):
                self._end_round(now)
        elif fmt == "knockout" and heat.match is not None:
            match = self.matches[heat.match]
            a, b = results
            winner = knockout_winner(a, b)
            raced = [h.results for h in self.heats if h.match == match.id and h.results]
            if winner is not None:
                self._decide(match, winner, "race", now)
            elif len(raced) >= NO_SHOW_RACES and all(
                r.moves == 0 for race in raced[-NO_SHOW_RACES:] for r in race
            ):
                # Nobody came (or moved): new deals would be raced for ever. The better
                # seed, registered first, goes through.
                assert match.a is not None and match.b is not None
                self._decide(match, min(match.a, match.b), "walkover", now)
            else:
                self.next_at = now  # a new deal for the tie, at the next tick
        return True

    def _decide(self, match: Match, winner: int, how: str, now: float) -> None:
        match.winner = winner
        match.how = how
        loser = match.b if winner == match.a else match.a
        assert loser is not None
        self.players[loser].out_round = match.round
        if all(m.settled for m in self.matches if m.round == self.round):
            self._end_knockout_round(now)

    # ------------------------------------------------------------ standings

    def standings(self) -> list[dict[str, Any]]:
        """Every player, best first, with `rank` (shared when equal) and the format's
        columns. Removed players come last."""
        ids = [p.id for p in self.players]
        removed = {p.id for p in self.players if p.removed}
        fmt = self.config.format
        rows: list[dict[str, Any]]
        if fmt == "rounds":
            by_round: dict[int, list[RaceResult]] = {}
            for heat in self.heats:
                if heat.results is not None:
                    by_round.setdefault(heat.round, []).extend(heat.results)
            rows = [
                {
                    "rank": rank,
                    "player": row.player,
                    "points": row.points,
                    "wins": row.wins,
                    "time": round(row.time, 3),
                    "progress": row.progress,
                    "rounds": row.rounds,
                    "per_round": {str(k): v for k, v in sorted((row.per_round or {}).items())},
                }
                for rank, row in rounds_standings(ids, by_round, removed)
            ]
        elif fmt == "arena":
            done = [h.results for h in self.heats if h.results is not None]
            rows = [
                {
                    "rank": rank,
                    "player": row.player,
                    "score": row.score,
                    "wins": row.wins,
                    "heats": row.heats,
                    "progress": row.progress,
                    "streak": row.streak,
                    "fire": row.fire,
                    "scores": row.scores,
                }
                for rank, row in arena_standings(ids, done, removed)
            ]
        else:
            races = [h.results for h in self.heats if h.results is not None]
            out_round = {p.id: p.out_round for p in self.players}
            rows = [
                {"rank": rank, "player": row.player, "wins": row.wins, "out_round": row.out_round}
                for rank, row in knockout_standings(ids, races, out_round, removed)
            ]
        for row in rows:
            player = self.players[row["player"]]
            row["name"] = player.name
            row["status"] = (
                "removed" if player.removed else "withdrawn" if player.withdrawn else "active"
            )
        return rows

    def champion(self) -> int | None:
        if self.config.format != "knockout" or self.status is not Status.FINISHED:
            return None
        alive = [p.id for p in self.players if p.out_round is None]
        return alive[0] if len(alive) == 1 else None

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
        )


_HEAT_FIELDS = tuple(f.name for f in dataclasses.fields(Heat))


def _slot(match: Match) -> int:
    return match.slot


def split_evenly(players: list[int], most: int) -> list[list[int]]:
    """Consecutive groups of at most `most`, as even as can be (17 by 8: 6, 6, 5)."""
    count = max(1, math.ceil(len(players) / most))
    size, extra = divmod(len(players), count)
    groups, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        groups.append(players[start:end])
        start = end
    return [g for g in groups if g]


def arena_groups(free: list[int], size: int, most: int) -> list[list[int]]:
    """Free players (leaders first) in heats of `size`; a last heat of one joins the
    one before it (up to `most`), otherwise that player waits for the next wave."""
    groups = [free[i : i + size] for i in range(0, len(free), size)]
    if len(groups) > 1 and len(groups[-1]) == 1:
        lone = groups.pop()
        if len(groups[-1]) < most:
            groups[-1] += lone
    return [g for g in groups if len(g) >= 2]
