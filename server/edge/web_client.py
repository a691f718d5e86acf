"""The web client: the static files of `server/edge/web/` (package data), served by the race server.

Every page (lobby, race, watch, TV, rules) is the same `index.html`; `app.js` reads the path
and draws the page. Files are plain JS modules, CSS and SVG: no build step. The
Content-Security-Policy allows nothing but this server, so the page makes no request
elsewhere (it works on a LAN with no internet).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import hdrs, web

__all__ = ["PAGES", "VARY_ACCEPT", "WEB_DIR", "add_web_client", "shell"]

WEB_DIR = Path(__file__).with_name("web")
# The paths the client draws itself (app.js routes them); everything else is the API.
PAGES = (
    "/",
    "/play/{room}",
    "/watch/{room}",
    "/tv",
    "/rules",
    "/rules/{game}",
    "/tour/{tour}",
    "/replay/{race}",
    "/p/{name}",
    "/top",
    "/top/{game}",
    "/account",
    "/daily/{date}",
)

# The static files sent compressed (the icon is one line of SVG).
COMPRESSED = (".js", ".css")

SECURITY = {
    # 'self' covers ws:// and wss:// to this host in current browsers; nothing else is allowed.
    "Content-Security-Policy": (
        "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "style-src 'self'; script-src 'self'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # The shell is small and changes with every release: always revalidated (ETag).
    "Cache-Control": "no-cache",
}


async def _page(request: web.Request) -> web.FileResponse:
    return web.FileResponse(WEB_DIR / "index.html", headers=SECURITY)


# The header of both answers of a path that is the page and an API too (`shell`): without
# it a browser going back there shows the JSON it cached for the page's own request.
VARY_ACCEPT = {"Vary": "Accept"}


def shell(request: web.Request, status: int = 200) -> web.FileResponse | None:
    """The page, for a path that is an API too (`/daily`), or no path at all (status 404:
    the page says there is no such page): when a browser navigates there (it asks for HTML
    first), else None (a client asking for JSON, answered with VARY_ACCEPT)."""
    accept = request.headers.get("Accept", "")
    if accept.startswith("text/html"):
        return web.FileResponse(
            WEB_DIR / "index.html", status=status, headers={**SECURITY, **VARY_ACCEPT}
        )
    return None


@web.middleware
async def _static_headers(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    response = await handler(request)
    if request.path.startswith("/static/"):
        response.headers.setdefault("Cache-Control", "no-cache")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        # Text compresses to about a third: gzip or deflate when the browser takes it. Not
        # for a revalidation (If-None-Match, If-Modified-Since): its usual answer is a 304
        # with no body, which compression would turn into a broken response.
        conditional = hdrs.IF_NONE_MATCH in request.headers or (
            hdrs.IF_MODIFIED_SINCE in request.headers
        )
        if (
            isinstance(response, web.FileResponse)
            and request.path.endswith(COMPRESSED)
            and not conditional
        ):
            response.enable_compression()
    return response


# The files under /static/, by name: any other name is a 404 like any unknown path (JSON,
# docs/protocol.md), where aiohttp's static route answered an empty 404 for a missing
# file, and a name too long for the file system raised an OSError (taken for a Redis one).
STATIC = frozenset(path.name for path in WEB_DIR.iterdir() if path.is_file())


async def _static(request: web.Request) -> web.FileResponse:
    name = request.match_info["name"]
    if name not in STATIC:
        raise web.HTTPNotFound()
    return web.FileResponse(WEB_DIR / name)


def add_web_client(app: web.Application) -> None:
    """Serve the pages and `/static/` from `app` (the race server's own process)."""
    for path in PAGES:
        app.router.add_get(path, _page)
    app.router.add_get("/static/{name:.*}", _static)
    app.middlewares.append(_static_headers)
