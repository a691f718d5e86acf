// The HTTP side of the protocol (docs/protocol.md section 3) and the game list.

export async function getJSON(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) throw new Error(body?.error?.message || `HTTP ${response.status}`);
  return body;
}

export async function postJSON(path, data) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(data),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(body?.error?.message || `HTTP ${response.status}`);
  return body;
}

let gamesPromise = null;

// {name: {title, cards, hidden, piles}} from GET /games, fetched once per page.
export function games() {
  gamesPromise ??= getJSON("/games").then((body) =>
    Object.fromEntries(body.games.map((g) => [g.name, g])),
  );
  return gamesPromise;
}

// Seat tokens live in localStorage, one per room, so a reload or a server restart puts the
// player back in their seat (protocol section 6).
const SEAT_KEY = (room) => `solrace.seat.${room}`;

export function savedSeat(room) {
  try {
    return JSON.parse(localStorage.getItem(SEAT_KEY(room)) || "null");
  } catch {
    return null;
  }
}

export function saveSeat(room, seat) {
  localStorage.setItem(SEAT_KEY(room), JSON.stringify(seat));
}

export function forgetSeat(room) {
  localStorage.removeItem(SEAT_KEY(room));
}

export function playerName() {
  return localStorage.getItem("solrace.name") || "";
}

export function setPlayerName(name) {
  localStorage.setItem("solrace.name", name);
}
