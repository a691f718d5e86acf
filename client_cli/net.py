"""A WebSocket to the race server that comes back by itself after a drop.

Independent of any screen: the play and watch screens and the bot all use it.
Each (re)connection first sends `hello()` (a join with the seat token and the
last event version seen, so the server replays only what was missed), then
whatever was queued while the link was down. An owner whose hello the server
refused for now (`unavailable`) calls `retry()`: the link connects again after
the next, longer, delay, not at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Awaitable, Callable
from urllib.parse import SplitResult, urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from protocol import (
    SERVER_TO_CLIENT,
    WS_PATH,
    Message,
    Unexpected,
    decode_json,
    decode_msgpack,
    encode_msgpack,
    socket_path,
)

__all__ = [
    "Link",
    "backoff_delay",
    "check_address",
    "foreign_status",
    "http_url",
    "no_server",
    "not_solrace",
    "server_key",
    "ws_url",
]

# Seconds between reconnection attempts: quick at first, then no faster than every 5 s.
BACKOFF = (0.2, 0.5, 1.0, 2.0, 5.0)


def backoff_delay(attempt: int, draw: Callable[[], float] = random.random) -> float:
    """The wait before reconnection attempt `attempt` (0 first): a random part of BACKOFF's
    step, from half of it to all of it. The clients a process lets go at once (it closed
    with 1013 or 1001) so come back spread out rather than all in the same instant."""
    step = BACKOFF[min(attempt, len(BACKOFF) - 1)]
    return step * (0.5 + draw() / 2)


def _split(server: str) -> SplitResult:
    """A server address's parts; `host:port` is http://host:port."""
    return urlsplit(server if "://" in server else f"http://{server}")


def check_address(server: str) -> None:
    """ValueError, saying why, when `server` is no address a server can have (no host, a
    port out of range, a scheme other than http(s) and ws(s)): tried as it was, it failed
    as if the server were down ("cannot reach http:///players")."""
    parts = _split(server)
    if parts.scheme not in ("http", "https", "ws", "wss"):
        raise ValueError(f"{parts.scheme}:// is none of http, https, ws, wss")
    if not parts.hostname:
        raise ValueError("it names no host")
    try:
        parts.port  # noqa: B018 (it checks the port)
    except ValueError:
        raise ValueError("its port is no number up to 65535") from None


def _site(server: str) -> tuple[bool, str, str]:
    """A server address (`host:port`, http(s)://..., ws(s)://.../ws) as (secure, host:port,
    the path it is under, without a trailing /ws)."""
    parts = _split(server)
    base = parts.path.rstrip("/")
    if base.endswith(WS_PATH):
        base = base[: -len(WS_PATH)]
    return parts.scheme in ("https", "wss"), parts.netloc, base


def ws_url(server: str, room: str | None = None) -> str:
    """`http://host:port` (or ws://...) -> `ws://host:port/ws`; with the room the socket is
    for, `ws://host:port/ws?room=ROOM` (the path POST /rooms answers): behind a balancer,
    every socket of a room then reaches the same server process."""
    secure, netloc, base = _site(server)
    return f"{'wss' if secure else 'ws'}://{netloc}{base}{socket_path(room)}"


def no_server(server: str) -> str:
    """What to say when nothing answers at the server's address (the usual cause: no
    server started yet)."""
    return f"no solrace server at {server}: is it running? (make run)"


def not_solrace(server: str, answer: str) -> str:
    """What to say when a server answers at the address but not as solrace does (a wrong
    port: another web server); `answer` is what it said ("HTTP 404")."""
    return (
        f"no solrace server at {server}: something else answered there ({answer});"
        " is the address right?"
    )


def foreign_status(status: int) -> bool:
    """An HTTP status solrace never answers where the client asks (a wrong address), as
    opposed to one a solrace process or its balancer gives for a while (429, 502-504)."""
    return status == 501 or (status < 500 and status != 429)


def http_url(server: str, path: str) -> str:
    """`http://host:port` + `/rooms` (a ws:// server address works too)."""
    secure, netloc, base = _site(server)
    return urlunsplit(("https" if secure else "http", netloc, base + path, "", ""))


def server_key(server: str) -> str:
    """One spelling of a server's address for all of its spellings (`host:port`,
    http://..., ws://.../ws, a trailing /): this machine's player and seats there are kept
    under it."""
    return http_url(server, "")


Handler = Callable[[Message], Awaitable[None] | None]


class Link:
    """One connection's worth of messages, kept alive across drops.

    `on_message` gets every server message (decoded; input that does not decode,
    or that `on_message` cannot take in, is dropped); `on_status` hears "connecting",
    "connected" and "reconnecting: why" so the screen can say what is going on.
    """

    def __init__(
        self,
        url: str,
        hello: Callable[[], Message],
        on_message: Handler,
        on_status: Callable[[str], None] = lambda status: None,
        identify: Message | None = None,
    ) -> None:
        self.url = url
        self.hello = hello
        self.identify = identify  # sent first on every connection: who we act as
        self.on_message = on_message
        self.on_status = on_status
        self.connected = asyncio.Event()
        self.drops = 0
        self._ws: ClientConnection | None = None
        self._queue: list[Message] = []
        self._closing = False
        self._retry = ""  # why the owner asked for this connection to be made again
        self._task: asyncio.Task[None] | None = None

    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.create_task(self.run(), name=f"link {self.url}")
        return self._task

    async def run(self) -> None:
        attempt = 0
        self.on_status("connecting")
        while not self.is_closing():
            reason = ""
            refusals = attempt  # failures in a row before this connection
            try:
                async with connect(self.url, compression=None, open_timeout=5) as ws:
                    self._ws = ws
                    if self.identify is not None:
                        await ws.send(encode_msgpack(self.identify))
                    await ws.send(encode_msgpack(self.hello()))
                    queued, self._queue = self._queue, []
                    for msg in queued:
                        await ws.send(encode_msgpack(msg))
                    self.connected.set()
                    refusals, attempt = attempt, 0
                    self.on_status("connected")
                    async for frame in ws:
                        await self._deliver(frame)
                    reason = "the server closed the connection"
            except ConnectionClosed as closed:
                reason = (
                    f"connection lost ({closed.rcvd.code if closed.rcvd else 'no close frame'})"
                )
            except ConnectionRefusedError:
                reason = no_server(http_url(self.url, ""))
            except InvalidStatus as error:
                status = error.response.status_code
                reason = (
                    not_solrace(http_url(self.url, ""), f"HTTP {status}")
                    if foreign_status(status)
                    else f"cannot reach {self.url} (HTTP {status})"
                )
            except InvalidHandshake:
                reason = not_solrace(http_url(self.url, ""), "not a WebSocket")
            except (OSError, TimeoutError) as error:
                reason = f"cannot reach {self.url} ({error.__class__.__name__})"
            except InvalidURI as error:
                self.on_status(f"bad server address: {error}")
                return
            finally:
                self._ws = None
                self.connected.clear()
            if self.is_closing():
                break
            if self._retry:
                # The hello was refused: the connection did not work, the backoff goes on.
                reason, attempt, self._retry = self._retry, refusals, ""
            self.drops += 1
            delay = backoff_delay(attempt)
            attempt += 1
            self.on_status(f"reconnecting: {reason}")
            await asyncio.sleep(delay)
        self.on_status("closed")

    def is_closing(self) -> bool:
        return self._closing

    async def _deliver(self, frame: str | bytes) -> None:
        if isinstance(frame, bytes):
            msg = decode_msgpack(frame, SERVER_TO_CLIENT)
        else:
            msg = decode_json(frame, SERVER_TO_CLIENT)
        if isinstance(msg, Unexpected):
            return
        try:
            result = self.on_message(msg)
            if result is not None:
                await result
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            # A message that decodes but holds what the client cannot take in (a map of
            # the wrong shape from a server of another version, or no solrace server): it
            # is dropped, as one that does not decode is. Raised here, it would end this
            # task, and with it every later message and reconnection, in silence.
            return

    async def send(self, msg: Message) -> None:
        """Send now, or as soon as the link is back (after the hello)."""
        ws = self._ws
        if ws is None:
            self._queue.append(msg)
            return
        try:
            await ws.send(encode_msgpack(msg))
        except ConnectionClosed:
            self._queue.append(msg)

    async def retry(self, reason: str) -> None:
        """The server refused this connection's hello for now: close it and connect
        again after the next delay of the backoff, as if it had failed to connect."""
        if self._ws is not None:
            self._retry = reason
            await self._ws.close()

    async def drop(self) -> None:
        """Cut the current connection (as a network fault would); the link comes back."""
        if self._ws is not None:
            await self._ws.close()

    async def close(self) -> None:
        self._closing = True
        if self._ws is not None:
            await self._ws.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
