"""What a tournament shows: its public view, standings pages, and the exports (JSON,
CSV, NDJSON) with every race's deal. Pure functions of the state: the HTTP handlers and
the live WebSocket pushes use the same ones. No tokens ever appear here. The payloads'
shapes are protocol/tournament.py's."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import protocol as p
from server.tournament.machine import Tournament
from server.tournament.model import Heat
from server.tournament.rooms import heat_room

__all__ = ["export_csv", "export_json", "export_ndjson", "race_view", "tour_view", "you_view"]


def race_view(tour: Tournament, heat: Heat) -> p.RaceView:
    """A race of the tournament; its deal and results are shown once it has finished and
    no other race still races its deal (`Tournament.deal_raced`)."""
    shown = not heat.live and tour.deal_raced(heat)
    return p.RaceView(
        heat=heat.id,
        room=heat_room(tour.id, heat.id),
        round=heat.round,
        game=heat.game,
        seed=heat.seed if shown else None,
        players=[tour.players[pid].name for pid in heat.players],
        live=heat.live,
        match=heat.match,
        results=None
        if heat.results is None or not shown
        else [
            p.RaceResultView(
                player=r.player,
                won=r.won,
                time=r.time,
                progress=r.progress,
                reached=r.reached,
                moves=r.moves,
                name=tour.players[r.player].name,
                seat=heat.players.index(r.player),
            )
            for r in heat.results
        ],
    )


def _name(tour: Tournament, pid: int | None) -> str | None:
    return None if pid is None else tour.players[pid].name


def tour_view(tour: Tournament) -> p.TourView:
    c = tour.config
    return p.TourView(
        id=tour.id,
        name=c.name,
        format=c.format,
        games=list(c.games),
        rounds=c.rounds,
        duration=c.duration,
        time_limit=c.time_limit,
        winnable=c.winnable,
        spectator_delay=c.spectator_delay,
        max_players=c.max_players,
        seats=c.seats,
        arena_heat=c.arena_heat,
        wave=c.wave,
        pause=c.pause,
        countdown=c.countdown,
        grace=c.grace,
        rated=c.rated,
        seeding=c.seeding,
        status=tour.status.value,
        round=tour.round,
        racing=tour.racing,
        paused=tour.paused,
        next_at=tour.next_at,
        created_at=tour.created_at,
        started_at=tour.started_at,
        ends_at=tour.ends_at,
        finished_at=tour.finished_at,
        players=len(tour.players),
        active=sum(pl.active for pl in tour.players),
        live=[race_view(tour, h) for h in tour.live_heats() if h.opened],
        deals=[p.DealView(round=r, game=tour.game_for(r), seed=s) for r, s in tour.raced_deals()],
        matches=[
            p.MatchView(
                id=m.id,
                round=m.round,
                slot=m.slot,
                a=_name(tour, m.a),
                b=_name(tour, m.b),
                winner=_name(tour, m.winner),
                how=m.how,
            )
            for m in tour.matches
        ],
        champion=_name(tour, tour.champion()),
    )


def you_view(tour: Tournament, pid: int, rows: list[p.Standing]) -> p.YouView:
    """A player's own line: their standing and, while they race, their room and seat."""
    player = tour.players[pid]
    row = next(r for r in rows if r["player"] == pid)
    live = next((h for h in tour.live_heats() if pid in h.players and h.opened), None)
    return p.YouView(
        player=pid,
        name=player.name,
        standing=row,
        room=None if live is None else heat_room(tour.id, live.id),
        seat=None if live is None else live.players.index(pid),
        out_round=player.out_round,
    )


def export_json(tour: Tournament) -> dict[str, Any]:
    return {
        "tournament": tour_view(tour),
        "standings": tour.standings(),
        "races": [race_view(tour, h) for h in tour.shown_heats()],
    }


def export_ndjson(tour: Tournament) -> str:
    """A line for the tournament, one per standing (best first), one per finished race."""
    lines = [json.dumps({"type": "tournament", **tour_view(tour)})]
    lines += [json.dumps({"type": "standing", **row}) for row in tour.standings()]
    lines += [json.dumps({"type": "race", **race_view(tour, h)}) for h in tour.shown_heats()]
    return "\n".join(lines) + "\n"


def export_csv(tour: Tournament) -> str:
    """One row per player, best first (the columns: TourFormat.export_rows)."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(tour.format.export_rows(tour))
    return out.getvalue()
