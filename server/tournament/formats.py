"""The tournament formats: Rounds, Arena and Knockout, one class each behind `TourFormat`,
looked up by name (`tour_format`), as python-chess looks up its variants.

A format decides what its tournament does with the clock (a round, a wave, a tie raced
again), what a finished heat changes, how many deals it needs ahead, when it is over, its
standings and how they are exported. The tournament (server/tournament/machine.py) keeps
the state and what every format shares (players, heats, deals, pause); a format is
stateless and works on the tournament it is given. Pure, like the machine: `now` is passed
in, nothing is read, awaited or stored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

import protocol as p
from server.tournament.model import Heat, Match
from server.tournament.scoring import (
    RaceResult,
    arena_standings,
    knockout_standings,
    knockout_winner,
    rounds_standings,
)

if TYPE_CHECKING:
    from server.tournament.machine import Tournament

__all__ = [
    "NO_SHOW_RACES",
    "Arena",
    "Knockout",
    "Rounds",
    "TourFormat",
    "arena_groups",
    "bracket_order",
    "split_evenly",
    "tour_format",
]

# Knockout: a match whose last this many races were tied with neither player moving is
# decided without another (for the better seed): two no-shows would tie for ever.
NO_SHOW_RACES = 2


Row = TypeVar("Row", bound=p.StandingBase)


def _who(tour: Tournament, rank: int, player: int, wins: int) -> p.StandingBase:
    """What every format's row says of its player."""
    entry = tour.players[player]
    return p.StandingBase(
        rank=rank,
        player=player,
        name=entry.name,
        status=tour.status_of(player),
        wins=wins,
        rating=entry.rating,
        provisional=entry.provisional,
        bot=entry.bot,
    )


class TourFormat(Generic[Row]):
    """What differs between the formats. Rounds and Knockout race in rounds with a break
    (`pause`) between them; the defaults here are theirs. `Row` is the format's STANDING
    row (protocol/tournament.py)."""

    name: ClassVar[str]
    min_players: ClassVar[int] = 2  # needed to start
    columns: ClassVar[tuple[str, ...]]  # a standing's own columns, in export order

    def started(self, tour: Tournament, now: float) -> None:
        """The organiser started `tour` (its first round is due now)."""

    def paused(self, tour: Tournament) -> None:
        if not tour.racing:
            tour.next_at = None  # the break is held: the next round waits for `resume`

    def resumed(self, tour: Tournament, now: float) -> None:
        if not tour.racing:
            tour.next_at = now + (tour.config.pause if tour.round else 0.0)

    def deadline(self, tour: Tournament) -> float | None:
        """When `tick` next has something to do."""
        times = [t for t in (tour.next_at, tour.ends_at) if t is not None]
        return min(times) if times else None

    def tick(self, tour: Tournament, now: float) -> bool:
        """Do what is due at `now`; True if anything changed."""
        raise NotImplementedError

    def deals_needed(self, tour: Tournament) -> dict[str, int]:
        """game -> deals to hold now, so that a round or wave does not wait for the solver."""
        raise NotImplementedError

    def heat_finished(self, tour: Tournament, heat: Heat, now: float) -> None:
        """`heat` has its results: what they decide."""
        raise NotImplementedError

    def over_after_round(self, tour: Tournament) -> bool:
        """The round just raced was the last."""
        raise NotImplementedError

    def rows(self, tour: Tournament) -> list[Row]:
        """Every player's row, best first, ranked (removed players last)."""
        raise NotImplementedError

    def standings(self, tour: Tournament) -> list[p.Standing]:
        # Row is one of p.Standing's members (each format names its own).
        return [cast(p.Standing, row) for row in self.rows(tour)]

    def champion(self, tour: Tournament) -> int | None:
        return None

    def export_rows(self, tour: Tournament) -> list[list[object]]:
        """The standings as a table (the CSV export): a header, then a line per player,
        best first: rank, name, status, the format's `columns`, then its race columns."""
        base: tuple[str, ...] = ("rank", "name", "status", *self.columns)
        table: list[list[object]] = [[*base, *self.export_header(tour)]]
        table += [
            [*(_cells(row)[c] for c in base), *self.export_cells(tour, row)]
            for row in self.rows(tour)
        ]
        return table

    def export_header(self, tour: Tournament) -> list[str]:
        """The race columns' names: one, `races`."""
        return ["races"]

    def export_cells(self, tour: Tournament, row: Row) -> list[object]:
        """A player's race cells: each finished race of theirs, in order, as
        GAME#SEED:WHAT, separated by spaces."""
        mine = [h for h in tour.shown_heats() if row["player"] in h.players]
        return [" ".join(self.race_cell(h, i, row) for i, h in enumerate(mine))]

    def race_cell(self, heat: Heat, index: int, row: Row) -> str:
        """What the player's `index`-th finished race (`heat`) gave them."""
        raise NotImplementedError


class Rounds(TourFormat[p.RoundsStanding]):
    """Everyone races the same new deal each round (in heats of `seats`, placed together);
    points by place."""

    name = "rounds"
    min_players = 1
    columns = ("points", "wins", "time", "progress", "rounds")

    def tick(self, tour: Tournament, now: float) -> bool:
        if tour.racing or tour.paused or tour.next_at is None or now < tour.next_at:
            return False
        number = tour.round + 1
        entrants = tour.active_by_standing()
        if not entrants:
            # Nobody to race (all withdrew): the round passes without a race.
            tour.round = number
            tour.end_round(now)
            return True
        seed = tour.take_seed(tour.game_for(number))
        if seed is None:
            return False  # the deal is still being drawn
        tour.round = number
        tour.round_seeds[number] = seed
        tour.racing = True
        tour.next_at = None
        # Heats of a round share the deal: grouping by standing only keeps leaders
        # together on screen.
        for group in split_evenly(entrants, tour.config.seats):
            tour.open_heat(number, tour.game_for(number), seed, group, now)
        return True

    def deals_needed(self, tour: Tournament) -> dict[str, int]:
        if tour.round >= tour.config.rounds:
            return {}
        return {tour.game_for(tour.round + 1): 1}

    def heat_finished(self, tour: Tournament, heat: Heat, now: float) -> None:
        if tour.racing and not any(h.live for h in tour.heats if h.round == tour.round):
            tour.end_round(now)

    def over_after_round(self, tour: Tournament) -> bool:
        return tour.round >= tour.config.rounds

    def rows(self, tour: Tournament) -> list[p.RoundsStanding]:
        by_round: dict[int, list[RaceResult]] = {}
        for heat in tour.shown_heats():  # a round counts once all its heats have raced
            by_round.setdefault(heat.round, []).extend(heat.results or ())
        ranked = rounds_standings(tour.player_ids(), by_round, tour.removed_ids())
        return [
            p.RoundsStanding(
                **_who(tour, rank, row.player, row.wins),
                points=row.points,
                time=round(row.time, 3),
                progress=row.progress,
                rounds=row.rounds,
                per_round={str(k): v for k, v in sorted((row.per_round or {}).items())},
            )
            for rank, row in ranked
        ]

    def export_header(self, tour: Tournament) -> list[str]:
        """A column per round raced to its end, named with its game and deal."""
        return [f"round {r} ({tour.game_for(r)} #{seed})" for r, seed in tour.raced_deals()]

    def export_cells(self, tour: Tournament, row: p.RoundsStanding) -> list[object]:
        """The points of each such round; empty for a round the player did not race."""
        return [row["per_round"].get(str(r), "") for r, _ in tour.raced_deals()]


class Arena(TourFormat[p.ArenaStanding]):
    """For `duration` seconds, every `wave` seconds the free players are grouped (leaders
    with leaders) into heats on fresh deals; heat wins, finishes and streaks score."""

    name = "arena"
    columns = ("score", "wins", "heats", "progress", "streak")

    def started(self, tour: Tournament, now: float) -> None:
        tour.ends_at = now + tour.config.duration

    def paused(self, tour: Tournament) -> None:
        tour.next_at = None  # no pairing until `resume`; the clock runs on to the end

    def resumed(self, tour: Tournament, now: float) -> None:
        tour.next_at = now  # pair the free players at once

    def tick(self, tour: Tournament, now: float) -> bool:
        assert tour.ends_at is not None
        live = tour.live_heats()
        if now >= tour.ends_at:
            if live:
                return False
            tour.finish(now)
            return True
        if tour.paused or tour.next_at is None or now < tour.next_at:
            return False
        if now + tour.config.countdown > tour.ends_at:
            # A heat races once its countdown is over: one paired now would begin after
            # the end. No more pairings; the end is the clock's.
            tour.next_at = None
            return True
        busy = {pid for heat in live for pid in heat.players}
        free = [pid for pid in tour.active_by_standing() if pid not in busy]
        # Who was left out of the last pairing goes first: nobody waits twice in a row
        # while another player is free (leaders with leaders only after them).
        free = [pid for pid in tour.waiting if pid in free] + [
            pid for pid in free if pid not in tour.waiting
        ]
        tour.next_at = now + tour.config.wave
        tour.waiting = free
        if len(free) < 2:
            return True
        wave = tour.round + 1
        game = tour.game_for(wave)
        opened = 0
        for group in arena_groups(free, tour.config.arena_heat, tour.config.seats):
            seed = tour.take_seed(game)
            if seed is None:
                tour.next_at = now  # deals are being drawn: pair the rest soon
                break
            tour.open_heat(wave, game, seed, group, now)
            tour.waiting = [pid for pid in tour.waiting if pid not in group]
            opened += 1
        if opened:
            tour.round = wave
        return True

    def deals_needed(self, tour: Tournament) -> dict[str, int]:
        per_wave = max(1, math.ceil(sum(p.active for p in tour.players) / 2))
        return {tour.game_for(tour.round + 1): per_wave}

    def heat_finished(self, tour: Tournament, heat: Heat, now: float) -> None:
        pass  # its players are free for the next wave; the end is the clock's

    def over_after_round(self, tour: Tournament) -> bool:
        return False  # an Arena has no rounds: it ends at `ends_at`

    def rows(self, tour: Tournament) -> list[p.ArenaStanding]:
        done = [h.results for h in tour.heats if h.results is not None]
        return [
            p.ArenaStanding(
                **_who(tour, rank, row.player, row.wins),
                score=row.score,
                heats=row.heats,
                progress=row.progress,
                streak=row.streak,
                fire=row.fire,
                scores=list(row.scores or []),
            )
            for rank, row in arena_standings(tour.player_ids(), done, tour.removed_ids())
        ]

    def race_cell(self, heat: Heat, index: int, row: p.ArenaStanding) -> str:
        return f"{heat.game}#{heat.seed}:{row['scores'][index]}"


def seed_key(tour: Tournament, pid: int) -> tuple[int, int, int]:
    """A Knockout seed's sort key, best first: by registration order, or by rating when
    the organiser chose so (the unrated after everyone, in registration order)."""
    rating = tour.players[pid].rating
    if tour.config.seeding != "rating" or rating is None:
        return (1, 0, pid)
    return (0, -rating, pid)


class Knockout(TourFormat[p.KnockoutStanding]):
    """Head to head in a bracket seeded by registration order; the loser of each match is
    out; a tied race is raced again on a new deal."""

    name = "knockout"
    columns = ("wins", "out_round")

    def started(self, tour: Tournament, now: float) -> None:
        """The bracket: seeds by registration order (or by rating, when the organiser
        chose so: the highest first, the unrated after in registration order), byes for
        the best seeds (its size a power of two), placed by `bracket_order`."""
        entrants = [pl.id for pl in tour.players if pl.active]
        if tour.config.seeding == "rating":
            entrants.sort(key=lambda pid: seed_key(tour, pid))
        for player in tour.players:
            if not player.active:
                player.out_round = 0
        size = 1 << max(1, (len(entrants) - 1).bit_length())
        slots = [entrants[s - 1] if s <= len(entrants) else None for s in bracket_order(size)]
        for slot in range(size // 2):
            tour.matches.append(
                Match(len(tour.matches), 1, slot, slots[2 * slot], slots[2 * slot + 1])
            )

    def deadline(self, tour: Tournament) -> float | None:
        if tour.racing and self._tied(tour):
            return tour.started_at  # past: due at once (`next_at` is a round's, none now)
        return super().deadline(tour)

    def tick(self, tour: Tournament, now: float) -> bool:
        changed = self._replay_ties(tour, now)
        if tour.racing or tour.paused or tour.next_at is None or now < tour.next_at:
            return changed
        return self._begin_round(tour, now) or changed

    def deals_needed(self, tour: Tournament) -> dict[str, int]:
        still_in = sum(pl.out_round is None for pl in tour.players)
        needed = {tour.game_for(tour.round + 1): max(1, math.ceil(still_in / 2))}
        current = tour.game_for(tour.round) if tour.round else tour.game_for(1)
        needed[current] = max(needed.get(current, 0), 2)  # ties are raced again
        return needed

    def heat_finished(self, tour: Tournament, heat: Heat, now: float) -> None:
        if heat.match is None or heat.results is None:
            return
        match = tour.matches[heat.match]
        a, b = heat.results
        winner = knockout_winner(a, b)
        raced = [h.results for h in tour.heats if h.match == match.id and h.results]
        if winner is not None and tour.players[winner].active:
            self._decide(tour, match, winner, "race", now)
        elif winner is not None:
            # The race's winner withdrew (or was removed) while it was raced: the race went
            # on and is a race won, but a withdrawn player never goes through. The other
            # goes through by walkover if still in; nobody does otherwise.
            self._settle_without_race(tour, match, match.round)
            self._end_round_if_settled(tour, now)
        elif len(raced) >= NO_SHOW_RACES and all(
            r.moves == 0 for race in raced[-NO_SHOW_RACES:] for r in race
        ):
            # Nobody came (or moved): new deals would be raced for ever. The better seed
            # goes through.
            assert match.a is not None and match.b is not None
            better = min(match.a, match.b, key=lambda pid: seed_key(tour, pid))
            self._decide(tour, match, better, "walkover", now)
        # Otherwise a tie: a new deal at the next tick (`deadline` says it is due).

    def over_after_round(self, tour: Tournament) -> bool:
        if sum(pl.out_round is None for pl in tour.players) > 1:
            return False
        # One player (or nobody) is left before the final: the rounds still to come are
        # drawn all the same, each settled by a bye, so that the bracket shows them whole.
        while len(self._round(tour, tour.round)) > 1:
            tour.round += 1
            for match in self._draw_round(tour, tour.round):
                self._settle_without_race(tour, match, tour.round)
        return True

    def rows(self, tour: Tournament) -> list[p.KnockoutStanding]:
        races = [h.results for h in tour.heats if h.results is not None]
        out_round = {pl.id: pl.out_round for pl in tour.players}
        ranked = knockout_standings(tour.player_ids(), races, out_round, tour.removed_ids())
        return [
            p.KnockoutStanding(
                **_who(tour, rank, row.player, row.wins),
                out_round=row.out_round,
            )
            for rank, row in ranked
        ]

    def champion(self, tour: Tournament) -> int | None:
        alive = [pl.id for pl in tour.players if pl.out_round is None]
        return alive[0] if len(alive) == 1 else None

    def race_cell(self, heat: Heat, index: int, row: p.KnockoutStanding) -> str:
        assert heat.results is not None
        winner = knockout_winner(*heat.results)
        verdict = "tie" if winner is None else "won" if winner == row["player"] else "lost"
        return f"{heat.game}#{heat.seed}:{verdict}"

    # ------------------------------------------------------------ the bracket

    @staticmethod
    def _round(tour: Tournament, number: int) -> list[Match]:
        return [m for m in tour.matches if m.round == number]

    def _draw_round(self, tour: Tournament, number: int) -> list[Match]:
        """Round `number`'s matches, drawn from the winners of the round before (slot k
        meets slot k + 1 of it) the first time they are asked for."""
        if not self._round(tour, number):
            previous = sorted(self._round(tour, number - 1), key=_slot)
            for slot in range(len(previous) // 2):
                a, b = previous[2 * slot].winner, previous[2 * slot + 1].winner
                tour.matches.append(Match(len(tour.matches), number, slot, a, b))
        return self._round(tour, number)

    def _begin_round(self, tour: Tournament, now: float) -> bool:
        number = tour.round + 1
        matches = self._draw_round(tour, number)
        game = tour.game_for(number)
        to_race = [m for m in matches if self._settle_without_race(tour, m, number)]
        if len(tour.seeds.get(game, [])) < len(to_race):
            # Undo nothing: byes and walkovers stand; wait for the deals.
            return len(to_race) < len(matches)
        tour.round = number
        tour.racing = True
        tour.next_at = None
        for match in to_race:
            self._race(tour, match, now)
        if not to_race:
            tour.end_round(now)
        return True

    def _race(self, tour: Tournament, match: Match, now: float) -> bool:
        """Open a race (a heat) for `match` on a new deal; False while none is drawn."""
        seed = tour.take_seed(tour.game_for(match.round))
        if seed is None:
            return False
        assert match.a is not None and match.b is not None
        heat = tour.open_heat(
            match.round, tour.game_for(match.round), seed, [match.a, match.b], now
        )
        heat.match = match.id
        return True

    def _settle_without_race(self, tour: Tournament, match: Match, number: int) -> bool:
        """Byes and walkovers; True if the match must be raced. A withdrawn player never
        goes through: with nobody still in, the match has no winner and both are out."""
        if match.settled:
            return False
        sides = [tour.players[pid] for pid in (match.a, match.b) if pid is not None]
        if len(sides) == 2 and all(pl.active for pl in sides):
            return True
        match.how = "bye" if len(sides) < 2 else "walkover"
        still_in = [pl for pl in sides if pl.active]
        match.winner = still_in[0].id if still_in else None
        for player in sides:
            if player.id != match.winner:
                player.out_round = number
        return False

    def _tied(self, tour: Tournament) -> list[Match]:
        """The round's undecided matches whose races so far could not part their players
        (none of them is being raced)."""
        return [
            match
            for match in self._round(tour, tour.round)
            if not match.settled
            and any(h.match == match.id for h in tour.heats)
            and not any(h.live for h in tour.heats if h.match == match.id)
        ]

    def _replay_ties(self, tour: Tournament, now: float) -> bool:
        """A match whose last race could not part its players gets a new deal."""
        if not tour.racing:
            return False
        changed = False
        for match in self._tied(tour):
            if not self._settle_without_race(tour, match, match.round):
                changed = True  # one withdrew since: a new deal is a race they won't get
            elif self._race(tour, match, now):
                changed = True
        if all(m.settled for m in self._round(tour, tour.round)):
            tour.end_round(now)
            return True
        return changed

    def _decide(self, tour: Tournament, match: Match, winner: int, how: str, now: float) -> None:
        match.winner = winner
        match.how = how
        loser = match.b if winner == match.a else match.a
        assert loser is not None
        tour.players[loser].out_round = match.round
        self._end_round_if_settled(tour, now)

    def _end_round_if_settled(self, tour: Tournament, now: float) -> None:
        if all(m.settled for m in self._round(tour, tour.round)):
            tour.end_round(now)


def _cells(row: Mapping[str, object]) -> Mapping[str, object]:
    return row  # a STANDING row read by its columns' names


def _slot(match: Match) -> int:
    return match.slot


_FORMATS: dict[str, TourFormat[Any]] = {f.name: f for f in (Rounds(), Arena(), Knockout())}
assert tuple(_FORMATS) == p.FORMATS


def tour_format(name: str) -> TourFormat[Any]:
    """The format named `name` (one of protocol.FORMATS; KeyError otherwise)."""
    return _FORMATS[name]


def bracket_order(size: int) -> list[int]:
    """Seeds 1..size in bracket order (size a power of two): 1 meets size, and the two
    best seeds can only meet in the final. [1, 8, 4, 5, 2, 7, 3, 6] for 8."""
    order = [1]
    while len(order) < size:
        n = len(order) * 2
        order = [x for seed in order for x in (seed, n + 1 - seed)]
    return order


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
