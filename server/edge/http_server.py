"""The HTTP server under the app: aiohttp's, with what a server on the open internet needs
below the request handlers, where no middleware reaches.

- **Errors of the request parser** (a path or a header over 8 KiB, a method that is no
  HTTP token, a Content-Length that is no number) are answered like every other error of
  the server, `{"error": {"code": "bad_request", "message": ...}}`, and logged as what they
  are, a client's fault: one INFO line, no traceback. aiohttp answers them in plain text and
  logs each one as an ERROR with its traceback.
- **A well-formed method the parser does not know** (`FOO /rooms`: aiohttp's parser knows
  only the registered methods and refuses any other as malformed) is answered as the
  router answers a known method a path does not take: 405 with `Allow`, or 404 for a path
  that does not exist.
- **A stalled client** must send its complete request head (a WebSocket upgrade too) within
  `handshake_timeout` seconds of connecting, or the connection is closed; a kept-alive
  connection its next one within as long of its last answer (aiohttp's keep-alive timeout).
- **Connections per client address**, counted here by the peer's address and capped at
  `max_connections_per_address`, before a byte of HTTP is read. Trusted proxies (whose
  clients are counted by their own address when they open a WebSocket, see server/edge/websocket.py)
  and loopback peers are not counted.

`Runner` is aiohttp's `AppRunner` serving these; `python -m server` and the tests use it.
"""

from __future__ import annotations

import ast
import asyncio
import ipaddress
import json
import logging
import re
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, LineTooLong
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest
from aiohttp.web_urldispatcher import UrlDispatcher
from yarl import URL

from protocol import ErrorCode
from server.edge.admission.limits import ConnectionCount
from server.edge.app_keys import METRICS, SETTINGS
from server.metrics import Metrics
from server.settings import Settings, parse_trusted_proxies

__all__ = ["Runner"]

log = logging.getLogger("solrace.http")

# After an early answer (413 for a body announced too big, 408) aiohttp reads and drops what
# the client still sends, so that the client reads the answer before the connection closes:
# for this long at most (aiohttp's default, 10 s, would let a 50 MiB upload run on).
LINGER = 1.0
KEEPALIVE = 75.0  # seconds an idle kept-alive connection stays, with no handshake_timeout
# Seconds the app's parts (sweeps, archive, tournaments, the feed: cleanup_ctx) get to stop
# on shutdown, once the sockets are closed. Each waits for a step it has begun, and a Redis
# that does not answer made each such wait its reply deadline (5 s): one after the other
# they added 9 to 19 s to a SIGTERM. What they leave undone is what a SIGKILL leaves: the
# other processes' reaper and the archive's lease take it over.
PARTS_STOP = 2.0

# A request line whose method is an HTTP token (RFC 9110 5.6.2), target and version aside.
_REQUEST_LINE = re.compile(r"([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\S+) HTTP/\d\.\d")


def _explain(exc: BaseException | None) -> str:
    if isinstance(exc, LineTooLong):
        return "the request line or a header is too long (over 8 KiB)"
    if isinstance(exc, BadHttpMethod):
        return "not an HTTP method"
    text = str(getattr(exc, "message", "") or "").splitlines()
    return f"malformed request: {text[0][:150]}" if text and text[0] else "malformed request"


class _Handler(RequestHandler):
    """aiohttp's connection handler, with the rules of this module."""

    __slots__ = ("_head_timer", "_peer")

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        server = self._manager
        assert isinstance(server, _Server)
        self._head_timer: asyncio.TimerHandle | None = None
        self._peer: str | None = None
        peer = _counted_peer(transport, server.trusted)
        if peer is not None:
            if not server.per_peer.acquire(peer):
                log.info("refused a connection from %s: %d open already", peer, server.per_peer.cap)
                transport.close()
                return
            self._peer = peer
        if server.settings.handshake_timeout:
            self._head_timer = self._loop.call_later(
                server.settings.handshake_timeout, self._head_late
            )

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        if self._peer is not None:
            server = self._manager
            assert isinstance(server, _Server)
            server.per_peer.release(self._peer)
            self._peer = None
        super().connection_lost(exc)

    def _head_late(self) -> None:
        self._head_timer = None
        if self._request_count == 0:  # not one complete request head yet
            log.info("closed a connection that sent no complete request in time")
            self.force_close()

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if status >= 500:  # the server's fault: aiohttp logs it with its traceback
            return super().handle_error(request, status, exc, message)
        unknown = _unknown_method(exc)
        if unknown is not None:
            return self._not_allowed(request, *unknown)
        explained = _explain(exc)
        log.info("bad request from %s: %s", request.remote, explained)
        return self._json_error(status, ErrorCode.BAD_REQUEST, explained)

    def _not_allowed(self, request: BaseRequest, method: str, path: str) -> web.Response:
        server = self._manager
        assert isinstance(server, _Server)
        allowed = _allowed_methods(server.router, path)
        if allowed is None:
            log.info("bad request from %s: %s on no such path", request.remote, method[:20])
            return self._json_error(
                404, ErrorCode.NOT_FOUND, f"no such path: {path[:100]} (see docs/protocol.md)"
            )
        log.info("bad request from %s: method %s", request.remote, method[:20])
        # The same words as the router's 405 for a known method (server/edge/routes.py).
        response = self._json_error(
            405,
            ErrorCode.BAD_REQUEST,
            f"{method[:20]} is not allowed here (allowed: {','.join(allowed)})",
        )
        response.headers["Allow"] = ",".join(allowed)
        return response

    def _json_error(self, status: int, code: ErrorCode, message: str) -> web.Response:
        """An error answer, counted as the app's are (solrace_http_errors_total{code})."""
        server = self._manager
        assert isinstance(server, _Server)
        server.metrics.http_errors.inc(code.value)
        return _json_error(status, code, message)


def _unknown_method(exc: BaseException | None) -> tuple[str, str] | None:
    """The method and path of a well-formed request line refused for its method alone.
    The parser's error quotes the line it stopped on (`b'FOO /rooms HTTP/1.1'`, on the
    third line of its message); None for anything else (not a token, a line cut short)."""
    if not isinstance(exc, BadHttpMethod):
        return None
    lines = str(exc.message).splitlines()
    try:
        quoted = ast.literal_eval(lines[2].strip()) if len(lines) > 2 else None
    except (ValueError, SyntaxError):
        return None
    if not isinstance(quoted, bytes):
        return None
    match = _REQUEST_LINE.fullmatch(quoted.decode("latin-1"))
    if match is None:
        return None
    try:
        path = URL(match.group(2)).path
    except ValueError:
        return None
    return match.group(1), path


def _allowed_methods(router: UrlDispatcher, path: str) -> list[str] | None:
    """The methods the app takes at `path` (None: no such path), as its router decides."""
    for resource in router.resources():
        info = resource.get_info()
        pattern = info.get("pattern")
        prefix = info.get("prefix")
        if (
            info.get("path") == path
            or (pattern is not None and pattern.fullmatch(path))
            or (prefix is not None and path.startswith(prefix.rstrip("/") + "/"))
        ):
            return sorted({route.method for route in resource})
    return None


def _json_error(status: int, code: ErrorCode, message: str) -> web.Response:
    body = {"error": {"code": code.value, "message": message}}
    response = web.Response(status=status, text=json.dumps(body), content_type="application/json")
    response.force_close()
    return response


def _counted_peer(transport: asyncio.BaseTransport, trusted: Any) -> str | None:
    """The peer's address if its connections are counted (not loopback, not a proxy)."""
    peer = transport.get_extra_info("peername")
    if not isinstance(peer, tuple) or not peer:
        return None  # a Unix socket
    try:
        address = ipaddress.ip_address(peer[0])
    except ValueError:
        return None
    if address.is_loopback or any(address in network for network in trusted):
        return None
    return str(address)


class _Server(web.Server):
    """aiohttp's server, making `_Handler`s. Built by `Runner` from the one aiohttp made."""

    settings: Settings
    trusted: Any
    per_peer: ConnectionCount
    router: UrlDispatcher
    metrics: Metrics

    def __call__(self) -> RequestHandler:
        return _Handler(self, loop=self._loop, **self._kwargs)


class Runner(web.AppRunner):
    """`web.AppRunner` for this server's app (the settings come from the app)."""

    def __init__(self, app: web.Application, **kwargs: Any) -> None:
        kwargs.setdefault("lingering_time", LINGER)
        # A kept-alive connection's next request head has as long as a first one: a client
        # that sent one request and then half of another (or nothing) held it for an hour.
        kwargs.setdefault("keepalive_timeout", app[SETTINGS].handshake_timeout or KEEPALIVE)
        super().__init__(app, **kwargs)

    async def _cleanup_server(self) -> None:
        """The app's parts stopped, given up after `PARTS_STOP` seconds: a process told to
        stop stops, whatever Redis does."""
        cleanup = asyncio.create_task(super()._cleanup_server(), name="solrace-cleanup")
        done, _ = await asyncio.wait({cleanup}, timeout=PARTS_STOP)
        if done:
            cleanup.result()  # its errors, as before
            return
        log.warning("shutdown: parts still stopping after %g s (Redis not answering?)", PARTS_STOP)
        # aiohttp goes on to the next part after a part's cancellation: cancel each in turn.
        while not cleanup.done():
            cleanup.cancel()
            await asyncio.wait({cleanup}, timeout=0.05)
        if not cleanup.cancelled():
            cleanup.exception()  # the parts' cancellations, gathered by aiohttp: expected here

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        # aiohttp builds its Server itself (with the app's private request handler and
        # factory); the subclass only adds the handler class and four fields.
        server.__class__ = _Server
        assert isinstance(server, _Server)
        settings = self.app[SETTINGS]
        server.settings = settings
        server.trusted = parse_trusted_proxies(settings.trusted_proxies)
        server.per_peer = ConnectionCount(settings.max_connections_per_address)
        server.router = self.app.router
        server.metrics = self.app[METRICS]
        return server
