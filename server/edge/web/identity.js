// Who this browser plays as (docs/protocol.md section 11): a player key kept in
// localStorage, made at the first visit (POST /players), sent as `identify` first on every
// WebSocket and as `Authorization: Bearer` on every request that acts as the player —
// never in a URL. The pages ask `me()` for the player, `authed()` to act as them.

import { parseJSON, request, setPlayerName, toJSON } from "./api.js";

const STORE = "solrace.player"; // {key, id, name, bot, claimed}

function kept() {
  try {
    const value = JSON.parse(localStorage.getItem(STORE) || "null");
    return value && typeof value.key === "string" ? value : null;
  } catch {
    return null;
  }
}

// A name the server gives (a new player's Guest-NNNN, a bot's Bot-NNNN), not one chosen:
// nobody can choose one, nor sign in by it (docs/protocol.md section 11).
export const isGuestName = (name) => /^(Guest|Bot)-/.test(name ?? "");

function keep(key, player) {
  const entry = { key, id: player.id, name: player.name, bot: player.bot, claimed: player.claimed };
  localStorage.setItem(STORE, JSON.stringify(entry));
  // The pages' name fields show the player's chosen name (a guest's stays as typed: it
  // becomes the player's name when a seat is taken, `useName`).
  if (!isGuestName(player.name)) setPlayerName(player.name);
  return entry;
}

// The header that says who reads or acts: what a daily deal keeps back (its replays, its
// seed) opens to a player whose own attempt is over (docs/protocol.md section 13).
export function playerHeaders() {
  const me = kept();
  return me ? { Authorization: `Bearer ${me.key}` } : {};
}

// A request acting as this browser's player: the answer's JSON, or an Error with `code`.
export async function authed(method, path, data) {
  const headers = { Accept: "application/json", ...playerHeaders() };
  if (data !== undefined) headers["Content-Type"] = "application/json";
  const response = await request(path, { method, headers, body: data === undefined ? undefined : toJSON(data) });
  const body = parseJSON(await response.text());
  if (!response.ok) {
    const error = new Error(body?.error?.message || `HTTP ${response.status}`);
    error.code = body?.error?.code;
    throw error;
  }
  return body;
}

let ready = null;

// This browser's player, made now if there is none (or the kept key signs nobody in any
// more); null when the server could not be asked (the pages then work anonymously).
export function me() {
  ready ??= (async () => {
    const entry = kept();
    if (entry) {
      try {
        return keep(entry.key, (await authed("GET", "/me")).player);
      } catch (error) {
        if (error.code !== "bad_key") return entry; // the server is down: keep the key
        forgetPlayersOwn();
        localStorage.removeItem(STORE);
      }
    }
    try {
      const made = await authed("POST", "/players", { label: deviceLabel() });
      return keep(made.key, made.player);
    } catch {
      return null;
    }
  })();
  return ready;
}

// Another tab of this browser changed its player (a rename, a claim, a sign-in, a
// sign-out: it wrote the kept entry): this page's player is that one from now on, and
// `callback(player)` hears it (null: signed out). A tab's own changes go by `signedIn`.
export function onPlayerChange(callback) {
  window.addEventListener("storage", (event) => {
    if (event.key !== STORE && event.key !== null) return;
    const entry = kept();
    ready = entry ? Promise.resolve(entry) : null;
    callback(entry);
  });
}

// The message every socket sends first, if this browser has a player.
export function identifyMessage() {
  const entry = kept();
  return entry ? { type: "identify", key: entry.key } : null;
}

// What the player's list of devices calls this browser (its key's label, docs/protocol.md
// section 11): "Firefox on Linux", from what the browser says of itself.
export function deviceLabel() {
  const ua = navigator.userAgent;
  const browser =
    [[/Edg\//, "Edge"], [/OPR\//, "Opera"], [/Firefox\//, "Firefox"], [/Chrom(e|ium)\//, "Chrome"],
      [/Safari\//, "Safari"]].find(([pattern]) => pattern.test(ua))?.[1] ?? "A browser";
  const system =
    [[/iPhone/, "iPhone"], [/iPad/, "iPad"], [/Android/, "Android"], [/CrOS/, "ChromeOS"],
      [/Windows/, "Windows"], [/Mac OS X/, "macOS"], [/Linux/, "Linux"]].find(([pattern]) => pattern.test(ua))?.[1];
  return system ? `${browser} on ${system}` : browser;
}

// Sign out a key this browser is about to forget (a key left live with nobody holding it
// would act for its player still, unseen).
async function revoke(key) {
  try {
    await request("/sign-out", { method: "POST", headers: { Accept: "application/json", Authorization: `Bearer ${key}` } });
  } catch {
    // the server cannot be reached: the player sees the key in their devices, to sign out
  }
}

// After a rename, a sign-in or a link: the new key (if any) and player, also in the
// header, which says who this browser plays as. A new key replaces the one held before,
// which is signed out.
export async function signedIn(key, player) {
  const before = kept();
  if (before && before.id !== player.id) forgetPlayersOwn(); // another player's, not this one's
  ready = Promise.resolve(keep(key ?? before?.key, player));
  const who = document.getElementById("who");
  if (who) who.textContent = shownName(player);
  if (key && before && before.key !== key) await revoke(before.key);
  return ready;
}

// What this browser kept for its player besides the key: the name typed for them, their
// seats' tokens, their tournament places and the tournaments they organise (docs/protocol.md
// section 11). A token acts for its holder, whoever is signed in: they go when the player
// signs out, or when another player signs in here.
const PLAYERS_OWN = /^solrace[.](name$|seat[.]|tour[.])/;

export async function signOut() {
  try {
    await authed("POST", "/sign-out");
  } catch {
    // a key the server no longer knows is signed out already
  }
  forgetPlayersOwn();
  localStorage.removeItem(STORE);
  ready = null;
}

function forgetPlayersOwn() {
  for (const name of Object.keys(localStorage)) {
    if (PLAYERS_OWN.test(name)) localStorage.removeItem(name);
  }
}

// A name with a bot's mark (bots are shown as bots everywhere).
export function shownName(player) {
  return player?.bot ? `${player.name} (bot)` : player?.name ?? "";
}

// The name typed in a page's name field becomes the player's name before a seat is taken
// (a seat shows its player's name, unique on the server): "" when it is (or already
// was), else why not (taken, against the rules), and the seat takes the current name.
// One at a time: a second (a double click) asks once the first is answered, and finds the
// name the player's. Asked beside it, its check could come after the first's rename and
// call the player's own new name taken.
let naming = Promise.resolve("");
export function useName(typed) {
  const turn = naming.then(() => nameOnce(typed));
  naming = turn.catch(() => "");
  return turn;
}

async function nameOnce(typed) {
  const player = await me();
  if (!typed || !player || typed === player.name) return "";
  try {
    // Asked first (always answered 200): a refused rename would be an error in the console.
    const free = await authed("GET", `/names/${encodeURIComponent(typed)}`);
    if (!free.available) return `${free.problem}: you play as ${player.name}`;
    const answer = await authed("POST", "/me/name", { name: typed });
    await signedIn(null, answer.player);
    return "";
  } catch (error) {
    return `${error.message}: you play as ${player.name}`;
  }
}
