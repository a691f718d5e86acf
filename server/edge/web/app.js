// The web client's entry: the header on every page, then the page its path names.
//   /                lobby          /play/ROOM   race (a seat)
//   /watch/ROOM      every board    /tv          the closest race running now
//   /rules, /rules/GAME             each game's rules
//   /tour/ID         a tournament: registration, standings, races, bracket
//   /replay/RACE     a finished race, move by move
//   /p/NAME          a player's profile    /top/GAME   a game's leaderboard
//   /account         your name, password, devices (identity.js keeps the player key)
//   /daily, /daily/DATE             the daily deals and their boards

import { h, clear } from "./dom.js";
import { setSounds, soundsOn } from "./sounds.js";
import { me, onPlayerChange, shownName } from "./identity.js";

// A game's name as a title: its first letter up (the page itself names it from /games).
const titled = (game) => game[0].toUpperCase() + game.slice(1);

// Each route: its path, its page, the names of the path's parts, and the tab's title (the
// tabs of several pages, and the history, told apart; a page may refine it once drawn).
const ROUTES = [
  [/^\/$/, () => import("./lobby.js"), [], () => "Lobby"],
  [/^\/play\/([^/]+)$/, () => import("./race.js"), ["room"], ({ room }) => `Race in room ${room}`],
  [/^\/watch\/([^/]+)$/, () => import("./watch.js"), ["room"], ({ room }) => `Watching room ${room}`],
  [/^\/tv$/, () => import("./tv.js"), [], () => "TV"],
  [/^\/tour\/([^/]+)$/, () => import("./tournament.js"), ["tour"], ({ tour }) => `Tournament ${tour}`],
  [/^\/rules(?:\/([^/]+))?$/, () => import("./rules.js"), ["game"], ({ game }) => (game ? `Rules of ${titled(game)}` : "Rules")],
  [/^\/replay\/([^/]+)$/, () => import("./replay.js"), ["race"], ({ race }) => `Replay of ${race}`],
  [/^\/p\/([^/]+)$/, () => import("./profile.js"), ["name"], ({ name }) => name],
  [/^\/top(?:\/([^/]+))?$/, () => import("./leaderboard.js"), ["game"], ({ game }) => (game ? `${titled(game)} leaderboard` : "Leaderboards")],
  [/^\/account$/, () => import("./account.js"), [], () => "Your account"],
  [/^\/daily(?:\/(\d{4}-\d{2}-\d{2}))?$/, () => import("./daily.js"), ["date"], ({ date }) => (date ? `Daily deals of ${date}` : "Daily deals")],
];

const setTitle = (what) => (document.title = `${what} · solrace`);

function header() {
  const top = document.getElementById("top");
  const fourColour = localStorage.getItem("solrace.fourColour") === "1";
  document.body.classList.toggle("four-colour", fourColour);
  const toggle = h("input", { type: "checkbox", id: "four-colour", checked: fourColour });
  toggle.addEventListener("change", () => {
    localStorage.setItem("solrace.fourColour", toggle.checked ? "1" : "0");
    document.body.classList.toggle("four-colour", toggle.checked);
  });
  const sounds = h("input", { type: "checkbox", id: "sounds", checked: soundsOn() });
  sounds.addEventListener("change", () => setSounds(sounds.checked));
  const here = location.pathname;
  const link = (href, text) =>
    h("a", { href, class: here === href || here.startsWith(`${href}/`) ? "here" : null }, text);
  clear(top).append(
    h(
      "nav",
      {},
      h("a", { href: "/", class: "brand" }, "solrace"),
      link("/", "Lobby"),
      link("/tv", "TV"),
      link("/daily", "Daily"),
      link("/rules", "Rules"),
      link("/top", "Leaderboards"),
      h("span", { class: "spacer" }),
      h("a", { href: "/account", id: "who", class: here === "/account" ? "here" : null }, "Account"),
      h(
        "label",
        { class: "toggle", title: "clubs green, diamonds blue" },
        toggle,
        " four-colour suits",
      ),
      h("label", { class: "toggle", title: "a tick for a move, a buzz for a refusal, a chord for a win" }, sounds, " sounds"),
    ),
  );
}

async function main() {
  header();
  // A first visit makes an anonymous player at once: nothing to fill in before a race.
  const player = await me();
  if (player) document.getElementById("who").textContent = shownName(player);
  // Renamed (or signed in, out) in another tab: the header says who plays here now.
  onPlayerChange((now) => (document.getElementById("who").textContent = now ? shownName(now) : "Account"));
  const root = document.getElementById("main");
  for (const [pattern, load, names, title] of ROUTES) {
    const match = location.pathname.match(pattern);
    if (!match) continue;
    const params = {};
    names.forEach((name, i) => (params[name] = match[i + 1] && decodeURIComponent(match[i + 1])));
    // A game's name in an address is that game whatever its case, as a room's code is.
    if (params.game) params.game = params.game.toLowerCase();
    setTitle(title(params));
    const page = await load();
    clear(root);
    await page.render(root, params);
    return;
  }
  setTitle("No such page");
  clear(root).append(h("p", {}, "No such page. ", h("a", { href: "/" }, "Back to the lobby")));
}

main();
