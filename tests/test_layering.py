"""The layering rules of STYLE.md: core does no I/O and knows nothing of the server."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent

FORBIDDEN_IN_CORE = {
    "asyncio",
    "aiohttp",
    "redis",
    "msgpack",
    "websockets",
    "socket",
    "server",
    "client_cli",
    "textual",
    "rich",
}
FORBIDDEN_IN_CLIENT = {"redis", "aiohttp.web"}


def imported_modules(package: str) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in (ROOT / package).rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update((str(path), alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add((str(path), node.module))
    return found


def test_core_imports_no_io_and_no_server() -> None:
    bad = [
        (path, mod)
        for path, mod in imported_modules("core")
        if mod.split(".")[0] in FORBIDDEN_IN_CORE
    ]
    assert bad == []


def test_client_imports_no_server_side() -> None:
    bad = [
        (path, mod)
        for path, mod in imported_modules("client_cli")
        if mod.split(".")[0] in FORBIDDEN_IN_CLIENT or mod in FORBIDDEN_IN_CLIENT
    ]
    assert bad == []
