"""The layering rules of STYLE.md, as allow-lists: each package names what it may import.

- `core/`: the standard library (no I/O modules) and pysol_cards;
- `protocol/`: the standard library (no I/O modules), msgpack and core;
- `client_cli/`: core and protocol among ours, its UI and client-side network libraries;
  never the server, Redis or aiohttp's server side.
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


def test_the_allow_lists_catch_what_they_forbid(tmp_path: pathlib.Path) -> None:
    client = tmp_path / "client_cli"
    client.mkdir()
    (client / "a.py").write_text(
        "import redis\nfrom server.app import x\nfrom aiohttp.web import y\nimport protocol\n"
    )
    assert [m for _, m in client_outside(client)] == ["aiohttp.web", "redis", "server.app"]
    core = tmp_path / "core"
    core.mkdir()
    (core / "a.py").write_text("import asyncio\nimport msgpack\nimport json\n")
    assert [m for _, m in outside(core, {"pysol_cards"})] == ["asyncio", "msgpack"]
