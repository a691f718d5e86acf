"""Every setting of the race server, in one frozen dataclass.

`Settings.from_env()` reads `SOLRACE_<NAME>` environment variables (and `REDIS_URL` and
`PORT` as the usual short names; not `HOST`, which tcsh sets to the machine's name in every
process); the command line (`python -m server`) builds
on `FIELDS` so that `--help` lists every setting with its help text.
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from records.engine import DatabaseUrlError, check_url, default_url

# The proxies whose X-Forwarded-For is believed (server/edge/admission/client_address.py).
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
TrustedProxies = tuple[Network, ...]


@functools.lru_cache(maxsize=8)
def parse_trusted_proxies(spec: str) -> TrustedProxies:
    """Networks from "127.0.0.1, 10.0.0.0/8, ::1"; ValueError names a bad entry."""
    networks = []
    for item in spec.replace(" ", ",").split(","):
        if item:
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise ValueError(f"not an address or network: {item!r}") from None
    return tuple(networks)


__all__ = [
    "FIELDS",
    "Settings",
    "SettingsError",
    "TrustedProxies",
    "parse_bool",
    "parse_trusted_proxies",
]


class SettingsError(ValueError):
    """A setting has a value that cannot be used."""


def _setting(default: Any, help: str, env: str | None = None) -> Any:
    return field(default=default, metadata={"help": help, "env": env})


@dataclass(frozen=True, slots=True)
class Settings:
    host: str = _setting("127.0.0.1", "address to listen on")
    port: int = _setting(8765, "TCP port to listen on", "PORT")
    redis_url: str | None = _setting(
        None,
        "Redis to use (redis://host:port/db; any node of a Redis Cluster will do); unset: "
        "start and supervise a local redis-server",
        "REDIS_URL",
    )
    archive_lease: float = _setting(
        30.0,
        "seconds a process has to archive a room's finished races before another process "
        "takes the job over (a process killed meanwhile delays its races by this much)",
    )
    data_dir: str = _setting(
        ".data",
        "where a self-started redis-server keeps its data, and the records' SQLite file "
        "(records.sqlite3) when database_url is unset",
    )
    database_url: str | None = _setting(
        None,
        "the database of the records (players, finished races, ratings): "
        "sqlite+aiosqlite:///PATH or postgresql+asyncpg://USER:PASSWORD@HOST/DB (every "
        "process of a fleet on one PostgreSQL); unset: SQLite in data_dir",
    )
    room_ttl: float = _setting(
        3600.0, "seconds a finished room (results, moves) is kept before it expires"
    )
    lobby_ttl: float = _setting(
        86400.0,
        "seconds an unfinished room lives in Redis after its last change (never less than "
        "its grace and a minute: an away seat is forfeit or freed first)",
    )
    empty_ttl: float = _setting(
        900.0,
        "seconds a room in its lobby with nobody seated (created and never joined, or left "
        "by everyone) lives in Redis after its last change; at most lobby_ttl",
    )
    max_frame: int = _setting(16384, "largest WebSocket frame accepted, in bytes")
    rate_per_second: float = _setting(
        30.0, "messages a connection may send per second, sustained (token bucket)"
    )
    rate_burst: float = _setting(60.0, "messages a connection may send in one burst")
    flood_close_after: int = _setting(
        50,
        "frames dropped for the rate limit within 10 s after which the socket is closed (1008)",
    )
    flood_cooldown: float = _setting(
        10.0,
        "seconds a client address whose socket was closed 1008 for flooding has its new "
        "WebSockets refused (HTTP 429 rate_limited) by this process; 0: never refused",
    )
    send_buffer: int = _setting(
        1 << 20, "bytes a client may leave unread before it is disconnected (4000)"
    )
    event_log: int = _setting(
        512, "events kept per room for reconnect catch-up; older clients get a snapshot"
    )
    countdown: float = _setting(3.0, "seconds between everyone ready and the start")
    grace: float = _setting(
        30.0, "default seconds a disconnected racer may be away before forfeiting"
    )
    max_seats: int = _setting(8, "most seats a room may have")
    room_rate: float = _setting(
        30.0,
        "rooms one client address may create per minute, in bursts of as many, counted in "
        "Redis across all processes (POST /rooms answers 429 beyond; a direct client on "
        "loopback is not limited); 0: no limit",
    )
    trusted_proxies: str = _setting(
        "127.0.0.1,::1",
        "comma-separated addresses or networks (CIDR) of the reverse proxies whose "
        "X-Forwarded-For names the client (per-client limits count by it); other peers are "
        "the client themselves; empty: trust no proxy",
    )
    handshake_timeout: float = _setting(
        10.0,
        "seconds a new connection may take to send its complete request head (a WebSocket "
        "upgrade too), and a kept-alive one its next after an answer; then it is closed. "
        "0: no limit (an idle kept-alive connection is then closed after 75 s)",
    )
    body_timeout: float = _setting(
        10.0, "seconds a request body may take to arrive; then the answer is 408. 0: no limit"
    )
    max_connections_per_address: int = _setting(
        128,
        "open connections one client address may hold (loopback is exempt); a connection "
        "beyond is closed at once, or refused 429 for a WebSocket through a proxy. 0: no cap",
    )
    limit_loopback: bool = _setting(
        False,
        "count a direct client on this machine (loopback, no proxy) by its address like any "
        "other for the limits checked per client (WebSockets per address, flood cooldown, "
        "rooms created, sign-in attempts): for benches and tests of those limits; "
        "production keeps the machine's own tools unlimited",
    )
    heartbeat: float = _setting(20.0, "seconds between WebSocket pings from the server")
    sweep_interval: float = _setting(
        0.25, "seconds between sweeps of due deadlines (countdown, time limit, grace)"
    )
    process_ttl: float = _setting(
        10.0,
        "seconds a server process is thought alive after its last heartbeat in Redis (it "
        "beats every fifth of it); a process silent longer, and still silent two beats "
        "later, is taken for dead: the others let go of its sockets' seats",
    )
    daily_secret: str = _setting(
        "",
        "the secret the daily deals are drawn from (docs/protocol.md section 13); every "
        "process of a site must share it; empty: one made once and kept in the records' database",
    )
    batch_max: int = _setting(512, "most move scripts sent to Redis in one pipeline")
    shutdown_timeout: float = _setting(5.0, "seconds to wait for sockets to close on shutdown")

    # Operations: draining before a stop.
    drain: float = _setting(
        5.0,
        "seconds a process keeps serving after SIGTERM while /healthz answers 503 (draining), "
        "so a balancer takes it out before it closes its sockets (1001); 0: close at once",
    )
    redis_cutoff: float = _setting(
        6.0,
        "seconds Redis may fail in a row before this process hands its players on: it closes "
        "its WebSockets with 1013 (try again later, through the balancer to a process that "
        "can serve them) and answers 503 to new ones until Redis answers again; 0: never",
    )
    # Operations: /metrics off the public port.
    metrics_port: int = _setting(
        0,
        "serve /metrics on this port only, on metrics_host (the public port then answers "
        "404 for it); 0: /metrics on the public port",
    )
    metrics_host: str = _setting("127.0.0.1", "address of the metrics_port listener")

    def __post_init__(self) -> None:
        try:
            parse_trusted_proxies(self.trusted_proxies)
        except ValueError as exc:
            raise SettingsError(f"trusted_proxies: {exc}") from None
        if not 0 <= self.port <= 65535:
            raise SettingsError(f"port must be 0..65535, got {self.port}")
        for name in ("max_frame", "send_buffer", "event_log", "max_seats", "batch_max"):
            if getattr(self, name) < 1:
                raise SettingsError(f"{name} must be at least 1")
        for name in (
            "rate_per_second",
            "rate_burst",
            "sweep_interval",
            "archive_lease",
            "empty_ttl",
        ):
            if getattr(self, name) <= 0:
                raise SettingsError(f"{name} must be positive")
        for name in ("room_ttl", "lobby_ttl", "countdown", "grace", "heartbeat", "room_rate"):
            if getattr(self, name) < 0:
                raise SettingsError(f"{name} must not be negative")
        for name in ("handshake_timeout", "body_timeout", "max_connections_per_address"):
            if getattr(self, name) < 0:
                raise SettingsError(f"{name} must not be negative")
        if self.process_ttl <= 0:
            raise SettingsError("process_ttl must be positive")
        for name in ("drain", "flood_cooldown", "redis_cutoff"):
            if getattr(self, name) < 0:
                raise SettingsError(f"{name} must not be negative")
        if self.database_url is not None:
            try:
                check_url(self.database_url)
            except DatabaseUrlError as exc:
                raise SettingsError(f"database_url: {exc}") from None
        if not 0 <= self.metrics_port <= 65535:
            raise SettingsError(f"metrics_port must be 0..65535, got {self.metrics_port}")

    @property
    def records_url(self) -> str:
        """The records' database: `database_url`, or the SQLite file under `data_dir`."""
        return self.database_url or default_url(self.data_dir)

    @staticmethod
    def env_name(name: str) -> str:
        return f"SOLRACE_{name.upper()}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from `SOLRACE_*` variables (and REDIS_URL, PORT), then overrides."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            names = [cls.env_name(f.name)]
            if f.metadata.get("env"):
                names.append(f.metadata["env"])
            raw = next((env[n] for n in names if env.get(n)), None)
            if raw is not None:
                values[f.name] = _parse(f.name, f.type, raw)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


FIELDS: tuple[dataclasses.Field[Any], ...] = dataclasses.fields(Settings)


def parse_bool(raw: str) -> bool:
    """ "1", "true", "yes", "on" (any case) and their opposites."""
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{raw!r} is not true or false (1/0, true/false, yes/no, on/off)")


def _parse(name: str, annotation: Any, raw: str) -> Any:
    kind = str(annotation)
    if kind.startswith("bool"):
        try:
            return parse_bool(raw)
        except ValueError as exc:
            raise SettingsError(f"{name}: {exc}") from None
    try:
        if kind.startswith("int"):
            return int(raw)
        if kind.startswith("float"):
            return float(raw)
    except ValueError:
        raise SettingsError(f"{name}: {raw!r} is not a number") from None
    return raw
