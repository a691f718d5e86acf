"""``python -m server`` (and ``solrace-server``): run the race server.

Every setting of :class:`server.settings.Settings` is a command-line option and an
environment variable; the option wins over the variable, the variable over the
default. Without ``REDIS_URL`` the server starts and supervises its own redis-server
(data in ``--data-dir``, append-only file on). SIGINT and SIGTERM shut it down
gracefully: sockets are closed with GOING_AWAY, then Redis is stopped last.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import logging
import os
import platform
import signal
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from aiohttp import web
from redis.exceptions import RedisError
from sqlalchemy.exc import DBAPIError

import core.build
from records.engine import redacted_url
from server.edge.admission.limits import raise_descriptor_limit
from server.edge.app import create_app
from server.edge.app_keys import DRAIN, PROCESS
from server.edge.http_server import Runner
from server.logs import FORMATS, tag_process
from server.logs import configure as configure_logging
from server.redis_io.supervisor import RedisSupervisor, RedisSupervisorError
from server.settings import FIELDS, Settings, SettingsError, parse_bool

__all__ = ["build_parser", "main", "serve", "settings_from_args"]

log = logging.getLogger("solrace")

_TYPES: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "bool": parse_bool}
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def _env_names(field: dataclasses.Field[Any]) -> str:
    names = [Settings.env_name(field.name)]
    if field.metadata.get("env"):
        names.append(field.metadata["env"])
    return " or ".join(names)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m server",
        description="The solrace race server: rooms, races and spectators over WebSockets, "
        "with Redis as the source of truth.",
        epilog="Each option can also be set by the environment variable named in its help; "
        "the option wins. Without REDIS_URL a local redis-server is started and supervised "
        "(binary from PATH; scripts/ensure-redis-server installs it).",
    )
    for field in FIELDS:
        kind = str(field.type).split(" ")[0]
        parser.add_argument(
            f"--{field.name.replace('_', '-')}",
            dest=field.name,
            type=_TYPES.get(kind, str),
            default=None,
            metavar=field.name.upper(),
            help=f"{field.metadata['help']} [env: {_env_names(field)}; default: {field.default}]",
        )
    parser.add_argument(
        "--log-format",
        default=None,
        type=str.lower,
        choices=FORMATS,
        help="text for people, json (one object per line) for log collectors "
        "[env: SOLRACE_LOG_FORMAT; default: text]",
    )
    parser.add_argument(
        "--log-level",
        default=None,
        type=str.upper,
        choices=LOG_LEVELS,
        help="how much to log on standard error [env: SOLRACE_LOG_LEVEL; default: INFO]",
    )
    return parser


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The environment's settings, with the options given on the command line on top."""
    return Settings.from_env(**{f.name: getattr(args, f.name) for f in FIELDS})


async def serve(settings: Settings, stop: asyncio.Event | None = None) -> None:
    """Serve until ``stop`` is set (by default: until SIGINT, or SIGTERM and its drain)."""
    loop = asyncio.get_running_loop()
    app: web.Application | None = None
    if stop is None:
        stop = asyncio.Event()
        on_signal = _signal_handler(loop, stop, lambda: app, settings.drain)
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, on_signal, signum)
    async with contextlib.AsyncExitStack() as stack:
        if settings.redis_url is None:
            redis_url = await stack.enter_async_context(RedisSupervisor(settings.data_dir))
            settings = dataclasses.replace(settings, redis_url=redis_url)
        app = create_app(settings)
        tag_process(app[PROCESS])
        runner = Runner(app, shutdown_timeout=settings.shutdown_timeout, access_log=None)
        # Registered after the supervisor, so it runs before it: Redis stops last.
        stack.push_async_callback(runner.cleanup)
        if not await _set_up(runner, stop):
            log.info("stopped while starting")
            return
        site = web.TCPSite(runner, settings.host, settings.port)
        await site.start()
        log.info(
            "solrace serving on http://%s:%d (Redis at %s), process %s",
            settings.host,
            settings.port,
            _shown(settings.redis_url),
            app[PROCESS],
        )
        log.info("%s", core.build.describe())
        # Which CPython build runs matters to the server's speed (scripts/pick-python).
        log.info(
            "interpreter: %s %s (%s)",
            platform.python_implementation(),
            platform.python_version(),
            sys.executable,
        )
        await stop.wait()
        log.info("shutting down: closing sockets with 1001")


async def _set_up(runner: Runner, stop: asyncio.Event) -> bool:
    """The app started (False: `stop` was set first). Starting may wait for what it needs
    (the records' database's first answer, for a few seconds), and a stop signal must end
    that wait."""
    setting_up = asyncio.ensure_future(runner.setup())
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({setting_up, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if setting_up.done():
        setting_up.result()
        return True
    setting_up.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await setting_up
    return False


def _signal_handler(
    loop: asyncio.AbstractEventLoop,
    stop: asyncio.Event,
    app: Callable[[], web.Application | None],
    drain: float,
) -> Callable[[int], None]:
    """SIGTERM (a deploy, systemd, a balancer's orchestration): drain for `drain` seconds,
    then stop. SIGINT (Ctrl-C), or any second signal: stop now."""

    def on_signal(signum: int) -> None:
        running = app()
        if signum != signal.SIGTERM or not drain or running is None or running[DRAIN].draining:
            stop.set()
            # A further Ctrl-C during a slow shutdown then interrupts it for good.
            for each in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(each)
            return
        running[DRAIN].begin(drain, time.monotonic())
        log.info("SIGTERM: draining for %g s (/healthz answers 503), then closing", drain)
        loop.call_later(drain, stop.set)

    return on_signal


def _shown(url: str | None) -> str:
    """A Redis URL fit for a log line (records.engine.redacted_url)."""
    return redacted_url(url) if url else "(none)"


def _run(main: Coroutine[Any, Any, None]) -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
    else:
        uvloop.run(main)


def main(argv: Sequence[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = settings_from_args(args)
    except SettingsError as exc:
        parser.error(str(exc))
    level = args.log_level or os.environ.get("SOLRACE_LOG_LEVEL", "").upper() or "INFO"
    if level not in LOG_LEVELS:
        parser.error(f"SOLRACE_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
    fmt = args.log_format or os.environ.get("SOLRACE_LOG_FORMAT", "").lower() or "text"
    if fmt not in FORMATS:
        parser.error(f"SOLRACE_LOG_FORMAT must be one of {', '.join(FORMATS)}, not {fmt!r}")
    configure_logging(level, fmt, settings.port)
    raise_descriptor_limit()  # one descriptor per socket: 1,024 is too few for a server
    try:
        _run(serve(settings))
    except (RedisSupervisorError, OSError) as exc:
        log.error("%s", exc)
        sys.exit(1)
    except RedisError as exc:  # REDIS_URL given, and that Redis cannot be used
        log.error("cannot use the Redis at %s: %s", _shown(settings.redis_url), exc)
        sys.exit(1)
    except DBAPIError as exc:
        if exc.statement is not None:
            raise  # a statement failed (a migration): its traceback is what to read
        # A database that answers and will not have this process (an outage is waited
        # out: server/edge/records_lifecycle.py): its URL is what to correct.
        url = redacted_url(settings.records_url)
        log.error("cannot use the records' database at %s: %s", url, exc.orig)
        sys.exit(1)
    except KeyboardInterrupt:
        log.warning("interrupted during shutdown")
        sys.exit(130)


if __name__ == "__main__":
    main()
