// The TV page: always the closest race running now (GET /tv/room chooses it), switching by
// itself a few seconds after the race it shows has finished.

import { h, clear } from "./dom.js";
import { getJSON } from "./api.js";
import { watchRoom } from "./watch.js";

const SHOW_RESULTS = 5000; // ms the results stay up before the next race
const POLL = 3000; // ms between looks when nothing runs

export async function render(root) {
  const screen = h("div", { id: "tv" });
  root.append(h("p", { class: "muted tv-note" }, "TV: the closest race running now (as its spectators see it: any delay is shown below)."), screen);
  let current = null;
  let switching = false;

  async function tune() {
    let room = null;
    let idle = "No race is running right now. This page switches to the next one by itself.";
    try {
      room = (await getJSON("/tv/room")).room;
    } catch (err) {
      idle = `${err.message} Trying again every ${POLL / 1000} s.`; // not "no race"
    }
    if (!room) {
      current?.socket.close();
      current = null;
      clear(screen).append(h("p", { class: "notice", id: "tv-idle" }, idle));
      setTimeout(tune, POLL);
      return;
    }
    current?.socket.close();
    clear(screen);
    screen.dataset.room = room.id;
    switching = false;
    current = await watchRoom(screen, room.id, {
      onEvent: (model) => {
        if (model.room?.status === "finished" && !switching) {
          switching = true;
          setTimeout(tune, SHOW_RESULTS);
        }
      },
    });
  }
  await tune();
}
