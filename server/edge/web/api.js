// The HTTP side of the protocol (docs/protocol.md section 3) and the game list.

// Deal numbers go up to 2^63-1, past what a JavaScript number holds exactly (2^53): read
// such an integer as its digits (a string; the pages only show it), and write a BigInt as
// its digits, so that the deal a player sees or types is the deal the server has. (The
// reviver only runs on a text with such a long number: most messages have none.)
const unsafe = (key, value, context) =>
  Number.isInteger(value) && !Number.isSafeInteger(value) && /^\d+$/.test(context?.source ?? "")
    ? context.source
    : value;

export function parseJSON(text) {
  return /\d{16}/.test(text) ? JSON.parse(text, unsafe) : JSON.parse(text);
}

const BIG = "\u0000big:";

export function toJSON(data) {
  const text = JSON.stringify(data, (key, value) => (typeof value === "bigint" ? `${BIG}${value}` : value));
  return text.replace(/"\\u0000big:(\d+)"/g, "$1");
}

async function answerOf(response) {
  const body = parseJSON(await response.text());
  if (!response.ok) throw new Error(body?.error?.message || `HTTP ${response.status}`);
  return body;
}

// fetch, with a network failure said in words (not the browser's "Failed to fetch").
export async function request(path, init) {
  try {
    return await fetch(path, init);
  } catch {
    throw new Error("The server cannot be reached.");
  }
}

export async function getJSON(path) {
  return answerOf(await request(path, { headers: { Accept: "application/json" } }));
}

export async function postJSON(path, data) {
  const response = await request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: toJSON(data),
  });
  return answerOf(response);
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

// Why the name typed for a quick match could not be the player's (taken, against the
// rules), kept for the race page the match leads to: the lobby's word may have been up for
// an instant only, an opponent waiting already. Read once, in this tab.
const NAME_PROBLEM_KEY = (room) => `solrace.nameProblem.${room}`;

export function keepNameProblem(room, problem) {
  sessionStorage.setItem(NAME_PROBLEM_KEY(room), problem);
}

export function takeNameProblem(room) {
  const problem = sessionStorage.getItem(NAME_PROBLEM_KEY(room)) || "";
  sessionStorage.removeItem(NAME_PROBLEM_KEY(room));
  return problem;
}

export function playerName() {
  return localStorage.getItem("solrace.name") || "";
}

export function setPlayerName(name) {
  localStorage.setItem("solrace.name", name);
}
