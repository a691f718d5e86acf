"""The floor of solrace's design: the bare relay, but every message kept in Redis first.

What no server of this design can go below, whatever its game logic costs: each message
is written to its room's stream in Redis by a Lua function (as a move is: one ``FCALL``
that appends and publishes), and relayed to the room (the sender too: its echo is its
answer) from the published message that comes back, as solrace's fan-out does, so that
several processes could serve one room. It uses solrace's own cheapest parts (the lean
RESP3 connection that carries the script call and its pub/sub on one socket, and frames
written straight to the transports) and no parsing, no validation and no game at all.
``bench.server`` runs it beside the relay: its CPU per message, against the relay's, is
the part of the goal "at most 2x the relay" that the design itself spends.
``python -m bench.floor --port P --redis-port R``.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import defaultdict
from typing import Any

from aiohttp import WSMsgType, web

from server.live.frames import frame
from server.redis_io.resp import RespConnection
from server.redis_io.resp_encode import encode_command, encode_fcall

__all__ = ["LIBRARY", "main", "make_floor_app"]

# A move's durable write at its simplest: append to the room's log, publish to its channel.
LIBRARY = """#!lua name=floor
redis.register_function('floor_keep', function(KEYS, ARGV)
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', 256, '*', 'e', ARGV[1])
  redis.call('PUBLISH', KEYS[2], ARGV[1])
  return 1
end)
"""


def make_floor_app(redis_host: str, redis_port: int) -> web.Application:
    rooms: defaultdict[str, list[Any]] = defaultdict(list)  # channel -> transports
    resp = RespConnection(redis_host, redis_port, resp3=True)

    def on_push(push: list[Any]) -> None:
        if len(push) == 3 and push[0] == b"message":
            data = frame(push[2], True)
            for transport in rooms.get(push[1].decode(), ()):
                transport.write(data)

    def landed(replies: list[Any] | Exception) -> None:
        pass

    async def startup(app: web.Application) -> None:
        await resp.connect()
        resp.on_push = on_push
        await resp.execute([("FUNCTION", "LOAD", "REPLACE", LIBRARY)])

    async def floor(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(compress=False)
        await ws.prepare(request)
        room = request.match_info["room"]
        channel, log = f"floor:{room}", f"floor:{room}:log"
        members = rooms[channel]
        if not members:
            resp.send_unanswered(encode_command(("SUBSCRIBE", channel)))
        transport = request.transport  # None once the connection is lost
        members.append(transport)
        keys = (log, channel)
        try:
            async for msg in ws:
                if msg.type == WSMsgType.BINARY:
                    resp.send_encoded([encode_fcall("floor_keep", keys, (msg.data,))], landed)
        finally:
            members.remove(transport)
        return ws

    app = web.Application()
    app.on_startup.append(startup)
    app.router.add_get("/relay/{room}", floor)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8771)
    parser.add_argument("--redis-port", type=int, required=True)
    args = parser.parse_args()
    try:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:
        pass
    app = make_floor_app("127.0.0.1", args.redis_port)
    web.run_app(app, host=args.host, port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
