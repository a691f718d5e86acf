// One WebSocket to the server with reconnects (protocol sections 1 and 6).
//
// `room`: the room the socket is for (a race or a watch), named in its path.
// JSON text frames. `hello()` gives the message to send on every (re)connect (join or
// watch with `since`); messages sent while the socket is down wait in a queue. The clock
// offset to server time comes from `welcome` and each `pong`. A page whose hello the
// server refused for now (`unavailable`) calls `retry()`: a new socket after the next,
// longer, delay (protocol section 6). A socket whose `identify` was refused for now is
// nobody (protocol section 4, `identify`): it identifies again before it asks for a seat
// or a match.

import { parseJSON } from "./api.js";
import { identifyMessage } from "./identity.js";

// The hello's refusals that mean "not now", not "never".
export const TRY_AGAIN = new Set(["unavailable", "rate_limited", "internal"]);

const PING_EVERY = 10000; // ms between pings (the clock's offset, and the link's life)
// ms a ping may wait for its pong: past it the link is dead though it never closed (a
// network gone without a word), and the page comes back on a new socket.
const DEAD_AFTER = 10000;

export class Socket {
  constructor({ room, hello, onMessage, onStatus }) {
    this.room = room; // the room this socket is for, if it is for one
    this.hello = hello;
    this.onMessage = onMessage;
    this.onStatus = onStatus || (() => {});
    this.queue = [];
    this.ws = null;
    this.closed = false;
    this.delay = 250; // before the next reconnect; doubles up to 2 s
    this.delayBefore = 250; // the delay in force before this socket opened
    this.offset = 0; // server time - local time, seconds
    this.bestRtt = Infinity;
    this.pingId = 0;
    this.pings = new Map();
    this.unidentified = false; // this socket's identify was refused for now
    this.reconnect = 0; // the timer of the next connect after a close
    // The browser knows when its network goes and comes back: a lost link is said at once,
    // not when a ping goes unanswered 10 to 20 s later (moves made meanwhile did nothing,
    // in silence), and the page is back as soon as the network is, not after its backoff.
    this.network = new AbortController();
    addEventListener("offline", () => this.lost(), { signal: this.network.signal });
    addEventListener("online", () => this.back(), { signal: this.network.signal });
    this.connect();
    this.pinger = setInterval(() => this.ping(), PING_EVERY);
  }

  // `/ws?room=ROOM` for a room's socket (protocol section 1): a balancer in front of
  // several server processes sends every socket of a room to the same one. The server
  // ignores the query: the hello's join or watch decides the room.
  url() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const room = this.room ? `?room=${encodeURIComponent(this.room.toLowerCase())}` : "";
    return `${scheme}//${location.host}/ws${room}`;
  }

  connect() {
    clearTimeout(this.reconnect); // one socket at a time: an earlier close's turn is this one
    if (this.closed) return;
    this.onStatus("connecting");
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.addEventListener("open", () => {
      this.delayBefore = this.delay;
      this.delay = 250;
      this.pings.clear(); // the last socket's: unanswered there, not here
      this.unidentified = false;
      this.onStatus("open");
      const identify = identifyMessage(); // first: seats and matches are the player's
      if (identify) ws.send(JSON.stringify({ v: 1, ...identify }));
      const hello = this.hello();
      if (hello) ws.send(JSON.stringify({ v: 1, ...hello }));
      this.ping();
      const waiting = this.queue;
      this.queue = [];
      for (const message of waiting) this.send(message);
    });
    ws.addEventListener("message", (event) => {
      const arrived = performance.now();
      let message;
      try {
        message = parseJSON(event.data);
      } catch {
        return;
      }
      if (message.type === "welcome" && message.server_time) this.clock(message.server_time, 0);
      if (message.type === "identified") this.unidentified = false;
      if (message.type === "error" && message.request === "identify") this.unidentified = TRY_AGAIN.has(message.code);
      if (message.type === "pong") {
        const sent = this.pings.get(message.id);
        this.pings.delete(message.id);
        if (sent !== undefined) this.clock(message.server_time, (arrived - sent) / 1000);
      }
      this.onMessage(message, arrived);
    });
    ws.addEventListener("close", () => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.closed) return;
      this.onStatus("down");
      // From half the delay to all of it: the pages a process lets go at once (1013, 1001)
      // come back spread out, not all in the same instant.
      this.reconnect = setTimeout(() => this.connect(), this.delay * (0.5 + Math.random() / 2));
      this.delay = Math.min(this.delay * 2, 2000);
    });
    ws.addEventListener("error", () => {}); // a close event follows: reconnect there
  }

  clock(serverTime, rtt) {
    // The answer was written about half a round trip ago; keep the estimate of the
    // fastest round trip, the least skewed one.
    if (rtt > this.bestRtt * 1.5 && rtt > 0) return;
    if (rtt > 0) this.bestRtt = Math.min(this.bestRtt, rtt);
    this.offset = serverTime + rtt / 2 - Date.now() / 1000;
  }

  now() {
    return Date.now() / 1000 + this.offset;
  }

  ping() {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    const id = ++this.pingId;
    this.pings.set(id, performance.now());
    ws.send(JSON.stringify({ type: "ping", v: 1, id }));
    setTimeout(() => {
      if (this.ws !== ws || !this.pings.has(id)) return;
      // Dead without a close: as a drop, said so, and a new socket at once.
      this.lost();
    }, DEAD_AFTER);
  }

  // The link is gone (though the socket may not know it yet): said so, and a new socket.
  lost() {
    if (this.closed) return;
    this.onStatus("down");
    this.restart();
  }

  // The network is back: a socket now, unless one is open.
  back() {
    if (this.closed || this.ws?.readyState === WebSocket.OPEN) return;
    this.delay = 250;
    this.restart();
  }

  // Send now, or when the socket is back. Moves pass queue=false: their owner re-sends
  // what was not answered after a reconnect, with the same seq.
  send(message, queue = true) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      // Taken as the player's once it is known who that is (a seat's token needs no one).
      const asks = message.type === "quick" || (message.type === "join" && !message.token);
      const identify = this.unidentified && asks ? identifyMessage() : null;
      if (identify) this.ws.send(JSON.stringify({ v: 1, ...identify }));
      this.ws.send(JSON.stringify({ v: 1, ...message }));
      return true;
    }
    if (queue) this.queue.push(message);
    return false;
  }

  // The server refused this socket's hello for now: close it; the reconnect comes after
  // the backoff's next delay, as if this socket had never opened.
  retry() {
    if (!this.ws) return;
    this.delay = this.delayBefore;
    this.ws.close();
  }

  // Drop the socket and open a new one (sending hello() again).
  restart() {
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close();
    this.connect();
  }

  close() {
    this.closed = true;
    clearInterval(this.pinger);
    clearTimeout(this.reconnect);
    this.network.abort();
    if (this.ws) this.ws.close();
    this.ws = null;
  }
}
