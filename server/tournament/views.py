"""What a tournament shows: its public view, standings pages, and the exports (JSON,
CSV, NDJSON) with every race's deal. Pure functions of the state: the HTTP handlers and
the live WebSocket pushes use the same ones. No tokens ever appear here."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from typing import Any

from server.tournament.machine import Heat, Tournament
from server.tournament.rooms import heat_room
from server.tournament.scoring import knockout_winner

__all__ = ["export_csv", "export_json", "export_ndjson", "race_view", "tour_view", "you_view"]


def race_view(tour: Tournament, heat: Heat) -> dict[str, Any]:
    """A race of the tournament; its deal is shown once it has finished."""
    return {
        "heat": heat.id,
        "room": heat_room(tour.id, heat.id),
        "round": heat.round,
        "game": heat.game,
        "seed": None if heat.live else heat.seed,
        "players": [tour.players[p].name for p in heat.players],
        "live": heat.live,
        "match": heat.match,
        "results": None
        if heat.results is None
        else [
            {
                **r.to_dict(),
                "name": tour.players[r.player].name,
                "seat": heat.players.index(r.player),
            }
            for r in heat.results
        ],
    }


def tour_view(tour: Tournament) -> dict[str, Any]:
    config = asdict(tour.config)
    config["games"] = list(tour.config.games)
    champion = tour.champion()
    return {
        "id": tour.id,
        **config,
        "status": tour.status.value,
        "round": tour.round,
        "racing": tour.racing,
        "paused": tour.paused,
        "next_at": tour.next_at,
        "created_at": tour.created_at,
        "started_at": tour.started_at,
        "ends_at": tour.ends_at,
        "finished_at": tour.finished_at,
        "players": len(tour.players),
        "active": sum(p.active for p in tour.players),
        "live": [race_view(tour, h) for h in tour.live_heats() if h.opened],
        "deals": [
            {"round": r, "game": tour.config.games[(r - 1) % len(tour.config.games)], "seed": s}
            for r, s in sorted(tour.round_seeds.items())
            if not any(h.live for h in tour.heats if h.round == r)
        ],
        "matches": [
            {
                "id": m.id,
                "round": m.round,
                "slot": m.slot,
                "a": None if m.a is None else tour.players[m.a].name,
                "b": None if m.b is None else tour.players[m.b].name,
                "winner": None if m.winner is None else tour.players[m.winner].name,
                "how": m.how,
            }
            for m in tour.matches
        ],
        "champion": None if champion is None else tour.players[champion].name,
    }


def you_view(tour: Tournament, pid: int, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A player's own line: their standing and, while they race, their room and seat."""
    player = tour.players[pid]
    row = next(r for r in rows if r["player"] == pid)
    live = next((h for h in tour.live_heats() if pid in h.players and h.opened), None)
    return {
        "player": pid,
        "name": player.name,
        "standing": row,
        "room": None if live is None else heat_room(tour.id, live.id),
        "seat": None if live is None else live.players.index(pid),
        "out_round": player.out_round,
    }


def export_json(tour: Tournament) -> dict[str, Any]:
    return {
        "tournament": tour_view(tour),
        "standings": tour.standings(),
        "races": [race_view(tour, h) for h in tour.heats if not h.live],
    }


def export_ndjson(tour: Tournament) -> str:
    """A line for the tournament, one per standing (best first), one per finished race."""
    lines = [json.dumps({"type": "tournament", **tour_view(tour)})]
    lines += [json.dumps({"type": "standing", **row}) for row in tour.standings()]
    lines += [json.dumps({"type": "race", **race_view(tour, h)}) for h in tour.heats if not h.live]
    return "\n".join(lines) + "\n"


def export_csv(tour: Tournament) -> str:
    """One row per player; Rounds add a column per round (named with its game and deal),
    Arena and Knockout a column listing each race as deal:score (or deal:won/lost)."""
    rows = tour.standings()
    fmt = tour.config.format
    base = ["rank", "name", "status"]
    extra = {
        "rounds": ["points", "wins", "time", "progress", "rounds"],
        "arena": ["score", "wins", "heats", "progress", "streak"],
        "knockout": ["wins", "out_round"],
    }[fmt]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    round_cols = [
        (r, f"round {r} ({tour.config.games[(r - 1) % len(tour.config.games)]} #{s})")
        for r, s in sorted(tour.round_seeds.items())
    ]
    header = base + extra + ([name for _, name in round_cols] if fmt == "rounds" else ["races"])
    writer.writerow(header)
    done = [h for h in tour.heats if not h.live]
    for row in rows:
        line = [row[c] for c in base + extra]
        if fmt == "rounds":
            line += [row["per_round"].get(str(r), "") for r, _ in round_cols]
        else:
            mine = [h for h in done if row["player"] in h.players]
            line.append(" ".join(_race_cell(h, i, row, fmt) for i, h in enumerate(mine)))
        writer.writerow(line)
    return out.getvalue()


def _race_cell(heat: Heat, index: int, row: dict[str, Any], fmt: str) -> str:
    """A player's `index`-th finished race: deal and what it gave them."""
    if fmt == "knockout":
        assert heat.results is not None
        a, b = heat.results
        winner = knockout_winner(a, b)
        verdict = "tie" if winner is None else "won" if winner == row["player"] else "lost"
        return f"{heat.game}#{heat.seed}:{verdict}"
    return f"{heat.game}#{heat.seed}:{row['scores'][index]}"
