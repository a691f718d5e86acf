"""Replays: written from moves, checked by the engine, tampering detected; the command line."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

import core
from core.__main__ import main
from core.replay import ReplayError, line_hash, verify, write_replay

SEED = 617


def a_replay() -> str:
    line = core.solve(core.new_game("shaula", SEED)).moves
    assert line
    moves = [(0, move, 0.5 + i) for i, move in enumerate(line)]
    moves += [(1, line[0], 2.25), (1, line[1], 3.0), (1, "undo", 3.5)]
    moves.sort(key=lambda m: m[2])
    header = {
        "game": "shaula",
        "seed": SEED,
        "players": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bo"}],
    }
    return write_replay(header, moves)


def test_a_replay_checks_and_gives_the_results() -> None:
    text = a_replay()
    lines = text.splitlines()
    assert json.loads(lines[0])["rules"] == 1
    assert all(json.loads(b)["prev"] == line_hash(a) for a, b in itertools.pairwise(lines))
    checked = verify(text)
    ann, bo = checked.results
    assert ann["won"] and ann["progress"] == 52 and ann["time"] == ann["reached"]
    assert not bo["won"] and bo["time"] is None and bo["moves"] == 3


@pytest.mark.parametrize(
    "edit",
    [
        lambda ls: ls[:2] + ls[3:],  # a move dropped
        lambda ls: [ls[0], ls[2], ls[1], *ls[3:]],  # two moves swapped
        lambda ls: [ls[0], ls[1].replace('"t":0.5', '"t":0.4'), *ls[2:]],  # a time edited
        lambda ls: [*ls[:-1], ls[-1].replace('"won":false', '"won":true')],  # results edited
    ],
)
def test_an_edited_replay_is_detected(edit: object) -> None:
    lines = a_replay().splitlines()
    edited = edit(lines)  # type: ignore[operator]
    with pytest.raises(ReplayError):
        verify("\n".join(edited) + "\n")


def test_an_illegal_move_is_refused_even_with_a_good_chain() -> None:
    header = {"game": "shaula", "seed": SEED, "players": [{"seat": 0, "name": "ann"}]}
    text = write_replay(header, [])
    lines = text.splitlines()
    move = json.dumps(
        {"kind": "move", "seat": 0, "move": "t1 f", "t": 1.0, "prev": line_hash(lines[0])}
    )
    results = json.loads(lines[1])
    results["prev"] = line_hash(move)
    with pytest.raises(ReplayError, match="move 1"):
        verify("\n".join([lines[0], move, json.dumps(results)]))


def test_python_m_core_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "race.ndjson"
    path.write_text(a_replay())
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "every one legal" in out and "ann" in out and "yes" in out
    path.write_text(a_replay().replace('"seat":1,"move"', '"seat":0,"move"', 1))
    assert main(["replay", str(path)]) == 1
    assert "error:" in capsys.readouterr().err
