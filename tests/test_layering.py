"""The layering rules of STYLE.md, as allow-lists: each package names what it may import.

- `core/`: the standard library (no I/O modules) and pysol_cards;
- `protocol/`: the standard library (no I/O modules), msgpack and core;
- `client_cli/`: core and protocol among ours, its UI and client-side network libraries;
  never the server, Redis or aiohttp's server side.
- `records/`: core and protocol among ours, and its database libraries; never the server
  (the server imports records).
"""

from __future__ import annotations

import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The standard library's modules that do I/O: the pure packages must not touch them.
IO_STDLIB = {"asyncio", "socket", "selectors", "ssl", "subprocess", "threading", "http", "urllib"}
# ... except these parts of them, which only compute (protocol/paths.py quotes a room id).
PURE_PARTS = {"urllib.parse"}
CLIENT_LIBRARIES = {"textual", "rich", "websockets", "msgpack", "aiohttp"}
RECORDS_LIBRARIES = {"sqlalchemy", "alembic", "openskill", "argon2"}


def imported_modules(folder: pathlib.Path) -> set[tuple[str, str]]:
    """(file, module) for every absolute import under `folder`."""
    found: set[tuple[str, str]] = set()
    for path in folder.rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update((str(path), alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add((str(path), node.module))
    return found


def outside(
    folder: pathlib.Path, allowed: set[str], io_allowed: bool = False
) -> list[tuple[str, str]]:
    """The imports under `folder` that are not on its allow-list (the package itself, the
    standard library, `allowed`; the standard library's I/O modules only if `io_allowed`)."""
    bad = []
    for path, module in imported_modules(folder):
        top = module.split(".")[0]
        if top == folder.name or top in allowed or top == "__future__":
            continue
        pure = top not in IO_STDLIB or module in PURE_PARTS
        if top in sys.stdlib_module_names and (io_allowed or pure):
            continue
        bad.append((path, module))
    return sorted(bad)


def client_outside(folder: pathlib.Path) -> list[tuple[str, str]]:
    bad = outside(folder, {"core", "protocol"} | CLIENT_LIBRARIES, io_allowed=True)
    # aiohttp as a client only: its server side is the server's business.
    bad += [(f, m) for f, m in imported_modules(folder) if m.startswith("aiohttp.web")]
    return sorted(bad)


def test_core_imports_only_the_stdlib_and_pysol_cards() -> None:
    assert outside(ROOT / "core", {"pysol_cards"}) == []


def test_protocol_imports_only_the_stdlib_msgpack_and_core() -> None:
    assert outside(ROOT / "protocol", {"msgpack", "core"}) == []


def test_client_imports_core_and_protocol_never_the_server() -> None:
    assert client_outside(ROOT / "client_cli") == []


def test_records_import_core_protocol_and_the_database_never_the_server() -> None:
    assert outside(ROOT / "records", {"core", "protocol"} | RECORDS_LIBRARIES, True) == []


def test_the_allow_lists_catch_what_they_forbid(tmp_path: pathlib.Path) -> None:
    client = tmp_path / "client_cli"
    client.mkdir()
    (client / "a.py").write_text(
        "import redis\nfrom server.edge.app import x\nfrom aiohttp.web import y\nimport protocol\n"
    )
    assert [m for _, m in client_outside(client)] == ["aiohttp.web", "redis", "server.edge.app"]
    core = tmp_path / "core"
    core.mkdir()
    (core / "a.py").write_text("import asyncio\nimport msgpack\nimport json\n")
    assert [m for _, m in outside(core, {"pysol_cards"})] == ["asyncio", "msgpack"]
    records = tmp_path / "records"
    records.mkdir()
    (records / "a.py").write_text("import sqlalchemy\nfrom server.settings import x\n")
    allowed = {"core", "protocol"} | RECORDS_LIBRARIES
    assert [m for _, m in outside(records, allowed, True)] == ["server.settings"]


# server/ bottom up: each subpackage may import those before it, never one after it.
# `daily/` (the daily deal's rule, board and store) stands on Redis alone, and the live
# lobby reads its rule of when a day is over; `tournament/` sits above the handlers and
# reaches rooms only through its adapter (server/tournament/rooms.py); the edge wires
# everything into the app.
SERVER_LAYERS = (
    "room",
    "redis_io",
    "storage",
    "daily",
    "live",
    "identity",
    "handlers",
    "tournament",
    "edge",
)
# Leaves of server/: they import nothing of server/ and anything may import them.
SERVER_LEAVES = {"settings", "logs", "metrics"}
# The entry points, which may import anything.
SERVER_ENTRY_POINTS = {"__init__", "__main__"}


def _server_part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "server" and len(parts) > 1 else None


def server_layer_breaches(server: pathlib.Path) -> list[tuple[str, str]]:
    """(file, module) for every import of server/ that goes up the layers, or sideways
    out of a leaf."""
    bad = []
    for path, module in imported_modules(server):
        me = pathlib.Path(path).relative_to(server).with_suffix("").parts[0]
        other = _server_part(module)
        if other is None or other == me or me in SERVER_ENTRY_POINTS:
            continue
        if me in SERVER_LEAVES:
            bad.append((path, module))
        elif other in SERVER_LEAVES:
            continue
        elif (
            other not in SERVER_LAYERS
            or me not in SERVER_LAYERS
            or SERVER_LAYERS.index(other) > SERVER_LAYERS.index(me)
        ):
            bad.append((path, module))
    return sorted(bad)


def test_server_subpackages_import_only_those_below_them() -> None:
    assert server_layer_breaches(ROOT / "server") == []


def test_server_has_only_entry_points_and_leaves_outside_its_subpackages() -> None:
    loose = {p.stem for p in (ROOT / "server").glob("*.py")}
    assert loose <= SERVER_ENTRY_POINTS | SERVER_LEAVES
    folders = {p.name for p in (ROOT / "server").iterdir() if (p / "__init__.py").exists()}
    assert folders == set(SERVER_LAYERS)


def test_the_server_layers_catch_an_upward_import(tmp_path: pathlib.Path) -> None:
    server = tmp_path / "server"
    for part in ("room", "storage", "edge"):
        (server / part).mkdir(parents=True)
    (server / "room" / "race.py").write_text("from server.storage.store import x\n")
    (server / "storage" / "store.py").write_text("from server.room.race import y\n")
    (server / "edge" / "app.py").write_text("from server.storage import store\n")
    (server / "settings.py").write_text("from server.edge.app import z\n")
    (server / "elsewhere.py").write_text("")
    (server / "room" / "view.py").write_text("from server.elsewhere import w\n")
    assert [m for _, m in server_layer_breaches(server)] == [
        "server.storage.store",
        "server.elsewhere",
        "server.edge.app",
    ]
