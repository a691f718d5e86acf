"""What the web bench (bench/web.py) and the browser tests (tests/server/edge/web/) both start: the
distribution's Chromium under Playwright (Playwright cannot download its own browser
here) with the flags a headless run in a container needs, the solver bot that races
against the page, and the probe both read the pages' timings through."""

from __future__ import annotations

import os
import shutil
import sys

from playwright.async_api import Browser, BrowserContext, Playwright

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "PROBE", "bot_command", "launch_chromium", "probe"]

CHROMIUM = os.environ.get("SOLRACE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


async def launch_chromium(pw: Playwright, executable: str = CHROMIUM) -> Browser:
    return await pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)


def bot_command(base: str, room: str, pace: float, name: str) -> list[str]:
    """The solver bot (`solrace bot`) joining `room` on the server at `base`."""
    return [
        sys.executable,
        *("-m", "client_cli", "--server", base, "bot", room),
        *("--pace", str(pace), "--name", name),
    ]


# Run in every page of a probed context before the page's own scripts, so the web client
# itself carries no measuring code. It wraps the WebSocket's message listeners: after the
# page's listener has handled an `accepted` (drawn it in the DOM), it records the work done
# (ackDrawMs) and, in the next animation frame, the time from the arrival to that frame's
# start (ackToFrameStart) and to a callback in it (ackToFrame); the same for a `pong`
# (pongToFrame*: a message that draws nothing, the baseline). `ping()` sends a ping on the
# page's open sockets (its id is one the page never sent: the page ignores its answer).
# With `timeDraws` set, every animation-frame callback that changes #boards (a watch
# page's redraw) is timed into drawMs.
PROBE = """(() => {
  const s = (window.__probe = { ackToFrame: [], ackToFrameStart: [], ackDrawMs: [],
    pongToFrame: [], pongToFrameStart: [], drawMs: [], timeDraws: false });
  const sockets = [];
  const add = WebSocket.prototype.addEventListener;
  WebSocket.prototype.addEventListener = function (type, listener, options) {
    if (type !== "message" || typeof listener !== "function") {
      return add.call(this, type, listener, options);
    }
    if (!sockets.includes(this)) sockets.push(this);
    return add.call(this, type, function (event) {
      const arrived = performance.now();
      const result = listener.call(this, event);
      const done = performance.now();
      let kind = null;
      try { kind = JSON.parse(event.data).type; } catch { return result; }
      const into = kind === "accepted" ? ["ackToFrameStart", "ackToFrame"]
        : kind === "pong" ? ["pongToFrameStart", "pongToFrame"] : null;
      if (!into) return result;
      if (kind === "accepted") s.ackDrawMs.push(done - arrived);
      requestAnimationFrame((frame) => {
        s[into[0]].push(frame - arrived);
        s[into[1]].push(performance.now() - arrived);
      });
      return result;
    }, options);
  };
  let pingId = 2 ** 40;
  s.ping = () => {
    for (const ws of sockets) {
      const ping = JSON.stringify({ type: "ping", v: 1, id: ++pingId });
      if (ws.readyState === WebSocket.OPEN) ws.send(ping);
    }
  };
  const raf = window.requestAnimationFrame.bind(window);
  let changes = null;
  window.requestAnimationFrame = (callback) => raf((time) => {
    const boards = s.timeDraws && document.getElementById("boards");
    if (!boards) return callback(time);
    if (!changes) {
      changes = new MutationObserver(() => {});
      const all = { subtree: true, childList: true, attributes: true };
      changes.observe(document.documentElement, all);
    }
    changes.takeRecords();
    const started = performance.now();
    const result = callback(time);
    const took = performance.now() - started;
    if (changes.takeRecords().some((r) => boards.contains(r.target))) s.drawMs.push(took);
    return result;
  });
})();"""


async def probe(context: BrowserContext) -> BrowserContext:
    """`context` with PROBE in each of its pages (`window.__probe`)."""
    await context.add_init_script(PROBE)
    return context
