// The race page: a seat in a room. Lobby (ready, start, leave), countdown on server time,
// the board (click a card then its target, drag it, or type a move in the engine's
// notation), undo/hint/autoplay where the room allows them, the other racers' progress,
// the results and rematch. This file draws; the seat (seat.js) talks to the server. Every
// move is checked by the server only: the board changes when a move is accepted, never
// before, so a refused move leaves it as it was.

import { h, add, clear, copyButton, counted } from "./dom.js";
import { games, getJSON, parseJSON, playerName, request, setPlayerName, takeNameProblem } from "./api.js";
import { authed, isGuestName, me as currentPlayer, onPlayerChange, playerHeaders, useName } from "./identity.js";
import { BoardView } from "./cards.js";
import { Announcer } from "./feedback.js";
import { Moments } from "./moments.js";
import { Seat } from "./seat.js";
import { showShortcuts } from "./shortcuts.js";
import { play as sound } from "./sounds.js";
import { moveWords, withSymbols } from "./table.js";
import { Bars, archivedNote, resultsTable, roomTitle, statusLine } from "./widgets.js";

const RESIGN_ASKS = 4000; // ms the "Resign: sure?" question waits for its answer

// Moves of each game's own kinds, as examples in the move box.
const PLACEHOLDER = { shaula: "t5 t2 3, c1 f", stalactites: "t3 f2, t3 c1", moojub: "r1 f1, deal" };

export async function render(root, { room: roomId }) {
  // ?sit=1 (a room just made, a ghost race asked for) takes the seat on this visit only: it
  // leaves the address at once, or Back to the page after "Leave seat" (or a reload) took
  // the seat again, unasked.
  const address = new URL(location.href);
  let sitNow = address.searchParams.has("sit");
  if (sitNow) {
    address.searchParams.delete("sit");
    history.replaceState(history.state, "", address);
  }
  const known = await games();
  let message = { text: "", kind: "" };
  let drawFrame = 0; // a draw asked for the next frame (drawSoon)

  const el = {
    head: h("div", { class: "race-head" }),
    status: h("div", { class: "status-line", id: "status" }),
    overlay: h("div", { class: "overlay", id: "overlay" }),
    board: h("div", { class: "board", id: "board" }),
    side: h("aside", { class: "side" }),
    players: h("div", { id: "players" }),
    controls: h("div", { class: "controls", id: "controls" }),
    message: h("p", { class: "message", id: "message", role: "status" }),
    results: h("div", { id: "results" }),
    seatForm: h("div", { id: "seat-form" }),
    // Hidden until there is a seat's room to draw (draw): before a seat is taken the page
    // is the seat form alone, not the form above empty panels.
    waiting: h("section", { id: "waiting", class: "waiting", "aria-label": "waiting room", hidden: true }),
    race: h("div", { class: "race", hidden: true }),
  };
  el.race.append(h("div", { class: "board-wrap" }, el.board, el.overlay), el.side);
  root.append(el.head, el.status, el.seatForm, el.waiting, el.race);
  el.side.append(el.players, el.controls, el.message, el.results);
  const bars = new Bars(el.players, known);
  const announcer = new Announcer(root);
  const moments = new Moments({
    announcer, over: el.board.parentElement, cards: (room) => known[room.game]?.cards || 52,
  });

  // `more`: what follows the text (a link).
  const say = (text, kind = "", ...more) => {
    message = { text, kind };
    el.message.replaceChildren(text, ...more);
    el.message.className = `message ${kind}`;
  };
  // The note that the name typed could not be the player's (they race under the name they
  // have) holds until they choose one: on the account page, maybe in another tab.
  onPlayerChange(() => {
    if (message.kind === "note name") say("");
  });
  const sayNameProblem = async (problem) => {
    const guest = isGuestName((await currentPlayer())?.name);
    say(`${problem}. `, "note name",
      h("a", { href: "/account" }, guest ? "Choose a name of your own" : "Change your name"), " on your account page.");
  };
  // A quick match's typed name, refused in the lobby: said here, where the player races.
  const quickProblem = takeNameProblem(roomId);
  if (quickProblem) sayNameProblem(quickProblem);

  // A seat asked for (seatForm's take) and not answered yet: one join is enough. A second
  // (a double click, a click while ?sit=1's join is on its way) asked again on the socket
  // by then seated, and its refusal drew the seat form again over the seat just taken. A
  // join a dropped socket took with it may be asked again.
  let joining = false;
  let autoplaying = false; // Autoplay's safe moves asked for, not answered yet (autoplay)
  let typed = null; // the move last sent from the move box, until it is answered
  const seat = new Seat(roomId, {
    onStatus: (s) => {
      el.head.dataset.connection = s;
      if (s !== "down") return;
      // What was asked on the socket went with it: a join and Autoplay may be asked again.
      joining = false;
      autoplaying = false;
      say("Connection lost: reconnecting…", "warn");
    },
    onWelcome: () => {
      joining = false;
      clear(el.seatForm);
      if (message.kind === "warn") say("");
    },
    onChange: (now) => (now ? draw() : drawSoon()),
    onAccepted: (m) => {
      typed = null;
      if (m.move === "undo" && model.room?.daily && attempt.ranked !== false) {
        attempt.ranked = false;
        drawSoon();
      }
      say("");
      sound("move");
      announcer.announce(moveWords(model.boards[model.seat], m.move));
    },
    onRefused: (m, msg) => {
      // The reason with its cards as on the board ("Q♦ does not go on J♥"); the cards
      // that were picked up shake where they stayed.
      say(withSymbols(m.reason), "refused");
      el.message.dataset.code = m.code;
      view.refused(msg?.move);
      sound("refused");
      // A typed move refused goes back in its box, selected: a typo is mended, not typed
      // again (the box was emptied as it was sent, as for one accepted).
      const box = document.getElementById("move-input");
      if (typed && msg?.move === typed && box && box.value === "") {
        box.value = typed;
        box.focus();
        box.select();
      }
      typed = null;
      if (["ready", "start", "rematch"].includes(m.request)) {
        // A control's request, refused: its button, off since its click, is drawn anew to
        // be clicked again.
        lastControls = null;
        drawSoon();
      }
    },
    onHint: (move) => {
      view.highlight(move);
      say(move ? `Hint: ${move}` : "No move left.");
    },
    onNotice: (text, kind) => say(text, kind),
    onSeatless: (reason, code) => {
      joining = false;
      // Answered over the link, which is back: no more "reconnecting" (the room may be gone).
      if (message.kind === "warn") say("");
      seatForm(reason, code);
    },
    onElsewhere: () => {
      // Asked once: a second join (a double click) came to the socket seated again by the
      // first, and its refusal drew the seat form over the race. The welcome takes it away.
      const here = (event) => {
        event.currentTarget.disabled = true;
        seat.rejoin();
      };
      clear(el.seatForm).append(h("p", { class: "notice" },
        "This race is now played in another window. ",
        h("button", { type: "button", id: "play-here", onclick: here }, "Play here")));
    },
  });
  const model = seat.model;

  const view = new BoardView(el.board, {
    interactive: true,
    onMove: (text) => play(text),
    onDeal: () => play("deal"),
    onSelect: async (sel, pattern) => {
      const legal = await seat.legal();
      if (legal && view.selected === sel) view.markTargets(targets(legal.moves, pattern));
    },
  });

  function play(text) {
    view.highlight(null);
    seat.move(text);
  }

  function drawSoon() {
    drawFrame ||= requestAnimationFrame(() => {
      drawFrame = 0;
      draw();
    });
  }

  // The piles a picked-up group may go to: the legal moves that read "SRC DST [N]".
  function targets(moves, pattern) {
    const [src, , n] = pattern.split(" ");
    return moves
      .map((move) => move.split(" "))
      .filter(([s, , k]) => s === src && (k ?? null) === (n ?? null))
      .map(([, dst]) => dst);
  }

  // The safe moves are asked for once at a time: a second ask (a double click on Autoplay)
  // before the first's answer was answered with the same moves, sent twice, and the second
  // sending's refusals were said. An ask after the answer comes after its moves (a socket's
  // messages are answered in order) and lists what is safe then.
  async function autoplay() {
    if (autoplaying) return;
    autoplaying = true;
    const button = document.getElementById("autoplay");
    if (button) button.disabled = true;
    // The server lists the safe moves (the engine's autoplay); they go back as moves.
    let legal;
    try {
      legal = await seat.legal();
    } finally {
      autoplaying = false;
      if (button) button.disabled = false;
    }
    if (!legal) return;
    const moves = legal.safe || [];
    if (!moves.length) say("No safe move to play.");
    for (const move of moves) play(move);
  }

  async function seatForm(reason = "", code = "") {
    clear(el.seatForm);
    const gone = (message) => h("p", { class: "error" }, message, " ", h("a", { href: "/" }, "Back to the lobby"));
    if (code === "unknown_room") {
      // Expired after its race, perhaps: the records may keep it.
      el.seatForm.append(await archivedNote(roomId) ?? gone(reason));
      return;
    }
    let room = null;
    try {
      room = (await getJSON(`/rooms/${roomId}`)).room;
    } catch (err) {
      el.seatForm.append(await archivedNote(roomId) ?? gone(reason || err.message));
      return;
    }
    // The room's title, as the seated page has it (draw puts it there again once seated).
    if (!el.head.childElementCount) el.head.append(roomTitle(room, known));
    if (room.daily && room.status !== "finished") {
      // Someone's ranked attempt at a daily deal: one seat, and nobody watches it while
      // it runs (docs/protocol.md section 13).
      el.seatForm.append(
        h("p", { class: "notice" }, "This is a player's daily attempt: nobody can watch it while it runs. ",
          "Its replay opens once your own attempt at the deal is over, or the day is. ",
          h("a", { href: "/daily" }, "Play today's deals"), " or ", h("a", { href: "/" }, "find another room"), "."),
      );
      return;
    }
    if (room.status !== "lobby" || room.players.length >= room.seats) {
      // Why, as the server would refuse a seat (room_closed, room_full): a race begun may
      // have a seat empty, and was said to have none.
      const why = room.status === "finished" ? "This race is over: no new seats. "
        : room.status !== "lobby" ? "This race has started: no new seats. "
        : "This race has no free seat. ";
      el.seatForm.append(
        h("p", { class: "notice" }, reason || why,
          h("a", { href: `/watch/${roomId}` }, "Watch it"), " or ", h("a", { href: "/" }, "find another room"), "."),
      );
      return;
    }
    const seated = room.players.length
      ? `Seated: ${room.players.map((p) => `${p.name}${p.ready ? " (ready)" : ""}`).join(", ")}.`
      : "Nobody is seated yet.";
    el.seatForm.append(
      h("p", { class: "room-about", id: "room-about" },
        `${known[room.game]?.title || room.game}, ${room.players.length} of ${room.seats} seats taken. ${seated}`),
    );
    const name = h("input", { id: "seat-name", maxlength: "32", value: playerName(), placeholder: "your name" });
    const take = async () => {
      if (joining) return;
      joining = true;
      const problem = await useName(name.value.trim()); // the seat shows the player's name
      // Said where it stays once seated (the seat form goes): "another player is called ...".
      if (problem) await sayNameProblem(problem);
      setPlayerName(playerName() || name.value.trim());
      seat.take(name.value.trim());
    };
    el.seatForm.append(
      h("form", { class: "seat", onsubmit: (e) => { e.preventDefault(); take(); } },
        reason ? h("p", { class: "error" }, reason) : null,
        h("label", {}, `Take a seat in this ${known[room.game]?.title || room.game} room as `, name),
        h("button", { type: "submit", id: "take-seat" }, "Take a seat"),
        " or ", h("a", { href: `/watch/${roomId}` }, "watch")),
    );
    if (sitNow) {
      sitNow = false;
      take();
    }
  }

  function drawControls() {
    const room = model.room;
    clear(el.controls);
    if (!room || model.seat === null) return;
    const me = model.player(model.seat);
    const status = room.status;
    const button = (id, text, action, opts = {}) =>
      h("button", { type: "button", id, onclick: action, ...opts }, text);
    // Asked once: the button is off from its click until the controls are drawn anew. A
    // second click (a double click) reached a room by then counting down, or in its new
    // round, and its refusal was said as the race began (a second leave: a socket that
    // held no seat any more).
    const once = (action) => (event) => {
      event.currentTarget.disabled = true;
      action();
    };
    if (status === "lobby") {
      add(el.controls, 
        // The last player's second ready (a double click) reached a room counting down.
        button("ready", me?.ready ? "Not ready" : "Ready", once(() => seat.ready(!me?.ready))),
        room.host === model.seat ? button("start", "Start now", once(() => seat.start()), { class: "secondary" }) : null,
        button("leave", "Leave seat", once(() => {
          seat.leave();
          location.assign("/");
        }), { class: "secondary" }),
      );
      return;
    }
    if (status !== "running") view.highlight(null); // a hint is for a race being run
    if (status === "running" && me && !me.out && !me.won) {
      const input = h("input", {
        id: "move-input", autocomplete: "off", spellcheck: "false",
        placeholder: PLACEHOLDER[room.game] ?? "",
        "aria-label": "type a move",
      });
      const form = h("form", { class: "typed", onsubmit: (e) => {
        e.preventDefault();
        typed = input.value.trim();
        play(input.value);
        input.value = "";
      } },
        input, h("button", { type: "submit" }, "Move"));
      add(el.controls, 
        form,
        h("div", { class: "buttons" },
          room.undo ? button("undo", "Undo", () => seat.undo()) : null,
          room.hints ? button("hint", "Hint", () => seat.hint()) : null,
          // Moojub has no safe move (a hidden talon): no autoplay, as in the terminal client.
          // A double click's second click (detail 2) is the same press: on a busy page it
          // could come after the first ask's answer, and ask again.
          known[room.game]?.hidden ? null : button("autoplay", "Autoplay", (e) => e.detail > 1 || autoplay(),
            { title: "play the safe moves to the foundations (the server lists them)" }),
          button("resign", "Resign", (e) => {
            const el = e.currentTarget;
            // The answer is a click of its own: a double click's second (e.detail 2; on a
            // phone the button stays under the finger as it asks) answered the question
            // its first had just asked. Answered, the resign is sent once.
            if (el.dataset.sure && e.detail < 2) {
              el.disabled = true;
              seat.resign();
              return;
            }
            if (el.dataset.sure) return;
            // Asked once: a second click within a few seconds confirms; after that the
            // question lapses, so that a stray click later asks again.
            el.dataset.sure = "1";
            el.textContent = "Resign: sure?";
            setTimeout(() => {
              delete el.dataset.sure;
              el.textContent = "Resign";
            }, RESIGN_ASKS);
          }, { class: "danger" })),
      );
      return;
    }
    if (status === "finished" && room.tournament) {
      // A tournament's race has no rematch: the next race comes from the tournament.
      add(el.controls, h("a", { class: "button", id: "back-to-tour", href: `/tour/${room.tournament}` }, "Back to the tournament"),
        replayLink());
      return;
    }
    if (status === "finished" && room.daily) {
      // One ranked attempt a day, no rematch: practice opens from the daily page.
      add(el.controls, h("a", { class: "button", id: "back-to-daily", href: "/daily" }, "Back to the daily deal"),
        replayLink());
      return;
    }
    if (status === "finished" && room.ghost) {
      // A ghost race has no rematch (docs/protocol.md): a new one against the same run
      // of that race, under the same time limit.
      add(el.controls,
        // Asked once: a second click (a double click) made a second room, which its
        // creator never saw. The button is off until the answer (a refusal gives it back).
        button("ghost-again", "Race this ghost again", async (event) => {
          const again = event.currentTarget;
          again.disabled = true;
          try {
            const body = { ghost: room.ghost, ghost_seat: await ghostSeat(room), time_limit: room.time_limit };
            const answer = await authed("POST", "/rooms", body);
            location.assign(`/play/${answer.room.id}?sit=1`);
          } catch (error) {
            again.disabled = false;
            say(error.message, "refused");
          }
        }),
        replayLink());
      return;
    }
    if (status === "finished") {
      const voted = room.players.filter((p) => p.rematch).map((p) => p.name);
      add(el.controls, 
        button("rematch", me?.rematch ? "Rematch: vote sent" : "Rematch", once(() => seat.rematch()), { disabled: me?.rematch }),
        replayLink(),
        voted.length ? h("p", { class: "muted" }, `Rematch votes: ${voted.join(", ")}`) : null,
      );
    }
  }

  // Which racer of the recorded race the ghost runs: the ghost is named after them
  // ("ann's ghost", docs/protocol.md), as the race's replay names its racers. null (the
  // run a ghost race takes by default) when the replay cannot be read.
  async function ghostSeat(room) {
    const ghost = room.players.find((p) => p.ghost)?.name;
    const path = room.ghost.includes(".") ? `/races/${room.ghost}/replay` : `/rooms/${room.ghost}/replay`;
    try {
      const response = await request(path, { headers: playerHeaders() }); // a daily race's asks who reads
      if (!response.ok) return null;
      const header = parseJSON((await response.text()).split("\n", 1)[0]);
      return header.players.find((p) => `${p.name}'s ghost` === ghost)?.seat ?? null;
    } catch {
      return null;
    }
  }

  // The finished race move by move, on the replay page.
  function replayLink() {
    return h("a", { class: "button secondary", id: "replay-link", href: `/replay/${roomId}` }, "Watch the replay");
  }

  // The waiting room (the lobby of this room): who is seated and ready, what starts the
  // race, and the link that brings a friend here.
  let lastWaiting = null;
  function drawWaiting(room) {
    const me = model.seat;
    const key = room.status === "lobby" && me !== null
      ? JSON.stringify([room.seats, room.host === me, room.players.map((p) => [p.name, p.ready])])
      : "";
    if (key === lastWaiting) return;
    lastWaiting = key;
    clear(el.waiting);
    el.waiting.hidden = !key;
    if (!key) return;
    const link = `${location.origin}/play/${room.id}`;
    const free = room.seats - room.players.length;
    const ready = room.players.filter((p) => p.ready).length;
    el.waiting.append(
      h("h2", {}, "Waiting room"),
      h("p", {}, `${room.players.length} of ${room.seats} seats taken, ${ready} ready. `,
        free ? `Waiting for ${counted(free, "more player")}: send them the link. ` : "",
        "The race starts by itself once every seat is taken and everyone is ready.",
        room.host === me ? " As the host, Start now begins the countdown at once with whoever is seated." : ""),
      h("p", { class: "share" },
        h("label", { for: "share-link" }, "Link to this room "),
        h("input", { id: "share-link", readonly: true, value: link, onfocus: (e) => e.target.select() }),
        " ", copyButton("copy", link, "copy the link to this room")),
    );
  }

  let lastHead = null;
  let lastControls = null;
  let lastPhase = null; // the round and its status the picked-up cards were picked up in
  let lastRound = null; // the round the words under the board were said in
  // A daily attempt's rank (section 13 of the protocol): ranked until its player undoes a
  // move. null: not known yet (GET /daily says, once per page).
  const attempt = { ranked: null, asked: false };
  async function rankOfAttempt(room) {
    if (attempt.asked) return;
    attempt.asked = true;
    try {
      const today = await authed("GET", "/daily");
      const you = today.games.find((g) => g.game === room.game)?.you;
      if (attempt.ranked === null && you?.room === room.id) attempt.ranked = you.ranked;
    } catch {
      return; // the server cannot say now: the page says nothing of the rank
    }
    drawSoon();
  }
  function draw() {
    if (drawFrame) {
      cancelAnimationFrame(drawFrame); // this draw takes every change so far
      drawFrame = 0;
    }
    const { changed, dirty } = model.take();
    const room = model.room;
    if (!room) return;
    el.race.hidden = false;
    const me = model.seat;
    const p = model.player(me);
    // The controls are rebuilt only when what they offer changes: a rebuild would drop
    // what the player is typing, and a click pressed on a button and let go on its
    // replacement (the others' votes are shown once the race is over, not before: a
    // player sitting down rebuilt the waiting room's Ready under the pointer).
    const controls = JSON.stringify([
      room.status, room.host, me, p?.ready, p?.out, p?.won, p?.rematch,
      room.status === "finished" ? room.players.map((x) => x.rematch) : null,
    ]);
    if (controls !== lastControls) {
      lastControls = controls;
      drawControls();
    }
    if (room.daily && attempt.ranked === null) rankOfAttempt(room);
    const head = `${room.status}|${room.round}|${room.seed}|${room.results ? 1 : 0}|${attempt.ranked}`;
    if (changed.has("all") || head !== lastHead) {
      lastHead = head;
      add(clear(el.head),
        roomTitle(room, known),
        room.daily && attempt.ranked !== null
          ? h("span", { class: "tag", id: "attempt-rank" },
            attempt.ranked ? "ranked attempt" : "unranked: undo was used (the attempt is kept)")
          : null,
        h("span", { class: "links" },
          h("a", { href: `/rules/${room.game}`, target: "_blank" }, `Rules of ${known[room.game]?.title}`),
          // A daily attempt is its player's alone, unwatched while it runs: no link leads
          // others there only to be refused (its replay opens once it is over).
          room.daily ? null : copyButton("share link", `${location.origin}/play/${room.id}`),
          room.daily ? null : copyButton("watch link", `${location.origin}/watch/${room.id}`),
          h("button", { type: "button", class: "small", id: "keys", onclick: showShortcuts, "aria-keyshortcuts": "?" }, "keys ?")),
      );
      clear(el.results);
      if (room.results) el.results.append(resultsTable(room, known, me));
    }
    // Cards picked up belong to the board they were picked up from: a race over drops
    // them, and a rematch deals another board, where they were whatever lay there.
    const phase = `${room.round}|${room.status}`;
    if (phase !== lastPhase) {
      lastPhase = phase;
      view.select(null);
    }
    // A new round's deal: what was said of the last one (a hint, a refusal) is not of it.
    // The note on the player's name holds until they choose one.
    if (lastRound !== null && room.round !== lastRound && message.kind !== "note name") say("");
    lastRound = room.round;
    const piles = dirty.get(me);
    if (changed.has("all") || piles === "all" || view.board !== (model.boards[me] ?? null)) {
      view.set(model.boards[me] ?? null);
    } else if (piles) {
      view.drawPiles(piles); // an accepted move: its two piles, nothing else
    }
    bars.update(room, me, model.best);
    drawWaiting(room);
    moments.update(room, me, seat.now());
  }

  // The clock: countdown to the start and the race's time, on server time.
  function tick() {
    const room = model.room;
    if (room) {
      statusLine(el.status, el.overlay, room, seat.now(), model.player(model.seat));
      moments.tick(el.overlay.textContent);
    }
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);

  // The terminal client's keys (shortcuts.js lists them on `?`); the board's own keys
  // (arrows, Enter, f) are in board_keys.js.
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement || e.ctrlKey || e.metaKey || e.altKey) return;
    const room = model.room;
    const running = room?.status === "running";
    if (e.key === "?") showShortcuts();
    else if (e.key === "Escape") view.select(null);
    // Asked in any room: one without undo (or hints) says why not, where the key was dead.
    else if (e.key === "u" && running) seat.undo();
    else if (e.key === "h" && running) seat.hint();
    else if (e.key === "a" && running && !known[room.game]?.hidden) autoplay();
    else if (e.key === "n" && running && known[room.game]?.hidden) play("deal");
    else if (e.key === "m" && document.getElementById("move-input")) {
      e.preventDefault();
      document.getElementById("move-input").focus();
    }
  });

  if (!seat.seated) seatForm();
}
