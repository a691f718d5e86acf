// The lobby: the open and running rooms, live (pushed by the server: `lobby_watch`, protocol
// section 5), creating a room with every setting of POST /rooms, quick match, and a link to
// share for each room.

import { h, clear, copyButton, counted, duration, keepFocus, leavingOnce } from "./dom.js";
import { games, getJSON, keepNameProblem, postJSON, playerName, saveSeat, setPlayerName } from "./api.js";
import { shownName, useName } from "./identity.js";
import { Socket, TRY_AGAIN } from "./net.js";
import { tournamentsSection } from "./tournament.js";

// Only while the socket is down (or the server cannot read the rooms) is the list polled
// over HTTP instead, and the page says so.
const FALLBACK_AFTER = 3000; // ms the live list may be down before polling starts
const FALLBACK_EVERY = 5000; // ms between two GET /rooms meanwhile
const MATCH_LATER = "The server cannot match you yet: trying again…";

// Each game in one line, for the one who has never played it.
const BLURB = {
  shaula: "Forty Thieves and FreeCell piles side by side, every card face up.",
  stalactites: "Eight piles onto four foundations, by ones or by twos: you choose once.",
  moojub: "Deal from a hidden talon onto a grid of 32 foundations.",
};

export async function render(root) {
  const known = await games();
  const names = Object.keys(known);
  const nameInput = h("input", {
    id: "name", maxlength: "32", placeholder: "your name", value: playerName(),
  });
  nameInput.addEventListener("change", () => setPlayerName(nameInput.value.trim()));

  const quick = h("div", { class: "quick" });
  const quickStatus = h("p", { class: "status", id: "quick-status", role: "status" });
  let quickSocket = null;
  // Each click of a Quick match, and each cancel, is the player's latest word: a click
  // still making the typed name the player's (requests to the server) when another
  // comes asks for nothing, or its socket would go on asking where no cancel reaches it.
  let asked = 0;
  const stopQuick = () => {
    asked += 1;
    const socket = quickSocket;
    quickSocket = null;
    quickStatus.textContent = "";
    if (!socket) return;
    // Said, not just a socket closed: a partner found a moment before still brings its
    // `matched` (the race is then this player's, docs/protocol.md), which onMessage follows;
    // else `unqueued` says the cancel took, and the socket closes then (or at the latest
    // after a while without an answer). A socket not open has asked nothing on this
    // connection (its hello goes on open): closed now, it never will.
    if (!socket.send({ type: "quick_cancel" }, false)) {
      socket.close();
      return;
    }
    setTimeout(() => socket.close(), 10000);
  };
  for (const game of names) {
    const button = h(
      "button",
      {
        type: "button",
        dataset: { quick: game },
        onclick: async () => {
          stopQuick();
          const mine = asked;
          const problem = await useName(nameInput.value.trim());
          if (mine !== asked) return; // another Quick match was clicked meanwhile
          const looking = `${problem ? `${problem}. ` : ""}Looking for a ${known[game].title} opponent…`;
          quickStatus.textContent = looking;
          quickStatus.append(" ", h("button", { type: "button", class: "small", onclick: stopQuick }, "cancel"));
          let later = false; // refused for now: said until the ask is queued
          const socket = new Socket({
            hello: () => ({ type: "quick", game, name: nameInput.value.trim() }),
            onStatus: (status) => {
              // "connecting" comes from inside the constructor: the status first, then `socket`.
              const said = { down: "The server cannot be reached; retrying…", open: looking }[status];
              // Back, the socket asks again (its hello): looking again, as it says.
              if (said && quickSocket === socket && !later) quickStatus.firstChild.textContent = said;
            },
            onMessage: (m) => {
              if (m.type === "queued" && later) {
                later = false;
                quickStatus.firstChild.textContent = looking;
              } else if (m.type === "matched") {
                saveSeat(m.room, { token: m.token, seat: m.seat });
                if (problem) keepNameProblem(m.room, problem);
                socket.close();
                location.assign(`/play/${m.room}`);
              } else if (m.type === "unqueued") {
                socket.close();
              } else if (m.type === "error" && quickSocket === socket) {
                if (!TRY_AGAIN.has(m.code)) quickStatus.textContent = m.message;
                else if (m.request === "quick") {
                  // Refused for now (storage away, or who the player is not checked yet):
                  // asked again on a new socket, with backoff, until it is queued.
                  later = true;
                  quickStatus.firstChild.textContent = MATCH_LATER;
                  socket.retry();
                } // an identify refused for now: the quick's own answer follows
              }
            },
          });
          quickSocket = socket;
        },
      },
      "Quick match",
    );
    quick.append(
      h("article", { class: "game-card" },
        h("h3", {}, known[game].title),
        h("p", {}, BLURB[game] ?? ""),
        h("div", { class: "game-actions" }, button, h("a", { href: `/rules/${game}` }, "Rules"))),
    );
  }

  const list = h("div", { id: "rooms" }, h("p", { class: "muted" }, "Loading rooms…"));
  root.append(
    h(
      "section",
      { class: "intro" },
      h("h1", {}, "Race at solitaire"),
      h(
        "p",
        {},
        "Everyone in a room gets the same deal; the first to put every card up wins. ",
        "Pick a game and race, or watch the closest race on ",
        h("a", { href: "/tv" }, "TV"),
        ".",
      ),
      h("label", { class: "field" }, "Your name ", nameInput),
    ),
    h("section", { "aria-labelledby": "play-now" }, h("h2", { id: "play-now" }, "Play now"),
      h("p", { class: "muted" }, "Quick match pairs you with the next player who asks for the same game."),
      quick, quickStatus),
    h("section", { "aria-labelledby": "create-title" }, h("h2", { id: "create-title" }, "Create a room"),
      h("p", { class: "muted" }, "Your own room: choose the game and the seats, then send its link to your friends."),
      createForm(known, nameInput)),
    h("section", { "aria-labelledby": "rooms-title" }, h("h2", { id: "rooms-title" }, "Rooms"), list),
    await tournamentsSection(known),
  );

  liveRooms(list, known);
}

// The rooms by id, from `lobby` (the whole list) and `lobby_changed` (what changed).
function liveRooms(list, known) {
  const rooms = new Map();
  const note = h("p", { class: "muted", id: "rooms-live" });
  list.before(note);
  const redraw = () =>
    drawRooms(list, [...rooms.values()].sort((a, b) => b.created_at - a.created_at), known);
  let downTimer = null;
  let polling = null;
  const poll = async () => {
    try {
      const body = await getJSON("/rooms");
      if (!polling) return; // the live list came back meanwhile
      rooms.clear();
      for (const room of body.rooms) rooms.set(room.id, room);
      redraw();
    } catch (err) {
      clear(list).append(h("p", { class: "error" }, `${err.message} Trying again every ${FALLBACK_EVERY / 1000} s.`));
    }
  };
  const startPolling = () => {
    downTimer = null;
    if (polling) return;
    note.textContent = "Live updates are down: the list is refreshed every 5 s.";
    list.dataset.feed = "polling";
    polling = setInterval(poll, FALLBACK_EVERY);
    poll();
  };
  const live = () => {
    clearTimeout(downTimer);
    downTimer = null;
    clearInterval(polling);
    polling = null;
    note.textContent = "";
    list.dataset.feed = "live";
  };
  const socket = new Socket({
    hello: () => ({ type: "lobby_watch" }),
    onStatus: (status) => {
      if (status !== "open" && !downTimer && !polling) {
        downTimer = setTimeout(startPolling, FALLBACK_AFTER);
      }
    },
    onMessage: (m) => {
      if (m.type === "lobby") {
        live();
        rooms.clear();
        for (const room of m.rooms) rooms.set(room.id, room);
        redraw();
      } else if (m.type === "lobby_changed") {
        for (const room of m.rooms) rooms.set(room.id, room);
        for (const id of m.gone) rooms.delete(id);
        redraw();
      } else if (m.type === "error" && m.request === "lobby_watch") {
        startPolling();
        setTimeout(() => socket.send({ type: "lobby_watch" }), FALLBACK_EVERY);
      }
    },
  });
}

function settingsText(room) {
  const bits = [counted(room.seats, "seat"), room.rated ? "rated" : "casual"];
  if (room.undo) bits.push("undo");
  if (room.hints) bits.push("hints");
  if (room.time_limit) bits.push(duration(room.time_limit));
  if (room.spectator_delay) bits.push(`${room.spectator_delay} s delay`);
  if (room.seed_mode === "winnable") bits.push("winnable deal");
  return bits.join(", ");
}

function drawRooms(list, rooms, known) {
  if (!rooms.length) {
    clear(list).append(h("p", { class: "muted" }, "No open room right now: create one or quick match."));
    return;
  }
  const rows = rooms.map((room) => {
    const free = room.status === "lobby" && room.players.length < room.seats;
    const play = `${location.origin}/play/${room.id}`;
    const watch = `${location.origin}/watch/${room.id}`;
    return h(
      "tr",
      { dataset: { room: room.id } },
      h("td", {}, h("code", {}, room.id)),
      h("td", {}, known[room.game]?.title || room.game),
      h("td", {}, h("span", { class: `status-${room.status}` }, room.status)),
      h("td", {}, `${room.players.length}/${room.seats}`, " ",
        h("span", { class: "muted" }, room.players.map(shownName).join(", "))),
      h("td", { class: "muted" }, settingsText(room)),
      h(
        "td",
        { class: "actions" },
        free ? h("a", { class: "button join", href: `/play/${room.id}` }, "Join") : null,
        h("a", { class: "button secondary watch", href: `/watch/${room.id}` }, "Watch"),
        copyButton("share", free ? play : watch, `share room ${room.id}`),
      ),
    );
  });
  // A live redraw every few seconds must not throw the keyboard focus back to the page:
  // the same control of the same room gets it again.
  keepFocus(list, () => clear(list).append(
    h(
      "table",
      { class: "rooms cards-narrow" },
      h("thead", {}, h("tr", {}, ["Room", "Game", "Status", "Players", "Settings", ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows),
    ),
  ));
}

function createForm(known, nameInput) {
  const field = (label, input, help) =>
    h("label", { class: "field" }, h("span", {}, label), input, help ? h("small", {}, help) : null);
  const game = h("select", { name: "game" }, Object.entries(known).map(([n, g]) => h("option", { value: n }, g.title)));
  const seedMode = h(
    "select",
    { name: "seed_mode" },
    h("option", { value: "random" }, "random deal"),
    h("option", { value: "winnable" }, "winnable deal (solver-proved)"),
    h("option", { value: "number" }, "deal number…"),
  );
  const seedNumber = h("input", { name: "seed", type: "number", min: "1", placeholder: "617", hidden: true });
  // A deal picked by its number is never rated (its picker may know it): docs/protocol.md.
  // Leaving the number again gives the box back as the player had it.
  const rated = h("input", { name: "rated", type: "checkbox", checked: true });
  let ratedBefore = true;
  seedMode.addEventListener("change", () => {
    seedNumber.hidden = seedMode.value !== "number";
    const numbered = seedMode.value === "number";
    if (numbered && !rated.disabled) ratedBefore = rated.checked;
    if (!numbered && rated.disabled) rated.checked = ratedBefore;
    rated.disabled = numbered;
    if (numbered) rated.checked = false;
  });
  const seats = h("input", { name: "seats", type: "number", min: "1", max: "8", value: "2" });
  const undo = h("input", { name: "undo", type: "checkbox", checked: true });
  const hints = h("input", { name: "hints", type: "checkbox" });
  // In minutes, bounded by the server's day (86400 s): its refusal would speak in seconds.
  const timeLimit = h("input", { name: "time_limit", type: "number", min: "0", max: "1440", placeholder: "none" });
  const delay = h("input", { name: "spectator_delay", type: "number", min: "0", max: "3600", value: "0" });
  const grace = h("input", { name: "grace", type: "number", min: "0", max: "3600", placeholder: "server default" });
  const countdown = h("input", { name: "countdown", type: "number", min: "0", max: "60", placeholder: "server default" });
  const status = h("p", { class: "error", id: "create-error" });
  const form = h(
    "form",
    { class: "create", id: "create" },
    field("Game", game),
    field("Seats", seats, "1 to 8 players"),
    field("Rated", rated, "the race moves the players' ratings; casual if not"),
    h("details", { class: "more", id: "more-settings" },
      h("summary", {}, "More settings"),
      h("div", { class: "more-fields" },
        field("Deal", h("span", { class: "inline" }, seedMode, seedNumber)),
        field("Undo", undo),
        field("Hints", hints, "the solver's next move"),
        field("Time limit (minutes)", timeLimit),
        field("Spectator delay (s)", delay, "how far behind the racers watchers see"),
        field("Grace after a drop (s)", grace, "how long a lost connection keeps its seat"),
        field("Countdown (s)", countdown, "from everyone ready to the start"))),
    h("div", { class: "submit" }, h("button", { type: "submit" }, "Create and take a seat"), status),
  );
  const num = (input, scale = 1) => (input.value === "" ? null : Number(input.value) * scale);
  // One room per asking: a second submit before the page has gone to the first room (a
  // double click) made a second, which nobody was in, listed for everyone to find.
  const create = leavingOnce(async () => {
    status.textContent = "";
    const body = {
      game: game.value,
      seed: seedMode.value !== "number" ? seedMode.value : /^\d+$/.test(seedNumber.value) ? BigInt(seedNumber.value) : Number(seedNumber.value),
      seats: Number(seats.value),
      undo: undo.checked,
      hints: hints.checked,
      rated: rated.checked,
      time_limit: num(timeLimit, 60) || null,
      spectator_delay: num(delay) ?? 0,
      grace: num(grace),
      countdown: num(countdown),
    };
    const answer = await postJSON("/rooms", body);
    setPlayerName(nameInput.value.trim());
    location.assign(`/play/${answer.room.id}?sit=1`);
  }, (err) => (status.textContent = err.message));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    create();
  });
  return form;
}
