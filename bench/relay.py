"""The baseline: a bare aiohttp server that relays each message to its room of 8.

It does no parsing, no validation and no storage: it is the best any aiohttp
WebSocket server of solrace's shape can do on this machine, and the benchmark
reports the real server as a ratio of it. ``python -m bench.relay --port P``.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import defaultdict

from aiohttp import WSMsgType, web

__all__ = ["ROOM_PATH", "main", "make_relay_app"]

ROOM_PATH = "/relay/{room}"


def make_relay_app() -> web.Application:
    rooms: defaultdict[str, set[web.WebSocketResponse]] = defaultdict(set)

    async def relay(request: web.Request) -> web.WebSocketResponse:
        # Compression off, as in the real server: it nearly halves throughput for
        # messages this small (shared/BASELINES.md).
        ws = web.WebSocketResponse(compress=False)
        await ws.prepare(request)
        members = rooms[request.match_info["room"]]
        members.add(ws)
        try:
            async for msg in ws:
                if msg.type == WSMsgType.BINARY:
                    for peer in tuple(members):
                        await peer.send_bytes(msg.data)
                elif msg.type == WSMsgType.TEXT:
                    for peer in tuple(members):
                        await peer.send_str(msg.data)
        finally:
            members.discard(ws)
        return ws

    app = web.Application()
    app.router.add_get(ROOM_PATH, relay)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8770)
    args = parser.parse_args()
    try:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:
        pass
    web.run_app(make_relay_app(), host=args.host, port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
