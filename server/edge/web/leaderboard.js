// The leaderboards (/top/GAME, over GET /leaderboard/GAME, docs/protocol.md): by rating
// (settled, recently active players) for today, this week or all time, or the best winning
// times on one deal; "around me" centres the page on this browser's player. The address
// keeps the choice (?by=, period=, seed=, around=1), so that it can be shared.

import { h, clear } from "./dom.js";
import { games, getJSON } from "./api.js";
import { me } from "./identity.js";

const PERIODS = [["day", "Today"], ["week", "This week"], ["all", "All time"]];

function choice(params) {
  return {
    by: params.get("by") === "time" ? "time" : "rating",
    period: PERIODS.some(([p]) => p === params.get("period")) ? params.get("period") : "all",
    seed: /^\d+$/.test(params.get("seed") || "") ? params.get("seed") : "",
    around: params.get("around") === "1",
  };
}

export async function render(root, { game }) {
  const known = await games();
  const nav = (shown) => h("p", { class: "rule-games" }, "Games: ",
    Object.entries(known).map(([name, g], i) => [i ? " · " : "", h("a", { href: `/top/${name}`, class: name === shown ? "here" : null }, g.title)]));
  if (game && !Object.hasOwn(known, game)) {
    // A name no game has (a mistyped address): said so, never another game's leaderboard.
    root.append(h("h1", {}, "Leaderboards"),
      h("p", { class: "error", id: "no-such-game" }, `No such game: ${game}. The games are:`), nav(null));
    return;
  }
  const shown = game || Object.keys(known)[0];
  const wanted = choice(new URLSearchParams(location.search));
  const go = (change) => {
    const next = { ...wanted, ...change };
    const query = new URLSearchParams({ by: next.by, period: next.period });
    if (next.seed) query.set("seed", next.seed);
    if (next.around) query.set("around", "1");
    location.assign(`/top/${shown}?${query}`);
  };
  // The chosen board and period look chosen (and say so), the others are plain: the rows
  // are of the choice, which a reader tells apart at a glance.
  const choose = (on, attrs = {}) => ({ ...attrs, class: on ? null : "secondary", "aria-pressed": String(on) });
  const seedInput = h("input", { id: "board-seed", inputmode: "numeric", value: wanted.seed, placeholder: "deal number", size: "12" });
  root.append(
    h("h1", {}, `${known[shown].title} leaderboard`),
    nav(shown),
    h("p", { class: "inline" },
      h("button", choose(wanted.by === "rating", { type: "button", onclick: () => go({ by: "rating" }) }), "By rating"),
      h("form", { class: "inline", onsubmit: (e) => { e.preventDefault(); go({ by: "time", seed: seedInput.value.trim() }); } },
        h("label", {}, "Best times on deal ", seedInput), h("button", choose(wanted.by === "time", { type: "submit" }), "Show"))),
    h("p", { class: "inline" },
      PERIODS.map(([period, label]) => h("button", choose(wanted.period === period, { type: "button", onclick: () => go({ period }) }), label)),
      h("label", { class: "toggle" }, h("input", { type: "checkbox", id: "around-me", checked: wanted.around, onchange: (e) => go({ around: e.target.checked }) }), " around me")),
  );
  const table = h("div", { id: "board" });
  root.append(table);
  if (wanted.by === "time" && !wanted.seed) {
    table.append(h("p", { class: "muted" }, "Best times are kept per deal: give a deal's number."));
    return;
  }
  const query = new URLSearchParams({ by: wanted.by, period: wanted.period });
  if (wanted.by === "time") query.set("seed", wanted.seed);
  const player = await me();
  if (wanted.around && player) query.set("around", player.id);
  let board;
  try {
    board = await getJSON(`/leaderboard/${shown}?${query}`);
  } catch (error) {
    table.append(h("p", { class: "error" }, error.message));
    return;
  }
  if (!board.rows.length) {
    table.append(h("p", { class: "muted" }, wanted.by === "rating"
      ? "Nobody here yet: ratings show once settled (about ten rated races) and while played."
      : "Nobody has won this deal in that period yet (wins in rooms that allow hints do not count)."));
    return;
  }
  const value = (row) => (wanted.by === "rating" ? String(row.rating) : `${(row.time_ms / 1000).toFixed(2)} s`);
  clear(table).append(
    // On a phone a long name is cut short to fit (style.css, fold-narrow), whole in its title.
    h("table", { class: "rooms leaderboard fold-narrow" },
      h("thead", {}, h("tr", {}, ["#", "Player", wanted.by === "rating" ? "Rating" : "Time", wanted.by === "rating" ? "Races" : "Replay"].map((c, i) =>
        h("th", { class: i === 1 ? "player" : null }, c)))),
      h("tbody", {}, board.rows.map((row) => h("tr", { class: player && row.player.id === player.id ? "me" : null },
        h("td", {}, row.rank),
        h("td", { class: "player" }, h("div", { class: "line" },
          h("a", { class: "name", title: row.player.name, href: `/p/${encodeURIComponent(row.player.name)}` }, row.player.name),
          row.player.bot ? h("span", { class: "tag bot" }, "bot") : null)),
        h("td", {}, value(row)),
        h("td", {}, wanted.by === "rating" ? row.races : h("a", { href: row.replay }, "replay")))))),
    h("p", { class: "muted" }, `${board.total} ranked`),
  );
}
