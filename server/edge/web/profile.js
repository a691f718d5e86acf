// A player's profile (/p/NAME, over GET /players/NAME): ratings per game with their history
// drawn as a small chart, races played and won, best times, and the latest races with
// links to their replays, a page at a time (?page=N).

import { h, add, counted, fmtSeconds } from "./dom.js";
import { games } from "./api.js";
import { authed } from "./identity.js";
import { fmtDelta, fmtSplit } from "./widgets.js";


const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, value);
  el.append(...children);
  return el;
}

// The rating history as a line: oldest left, newest right, lowest at the bottom.
export function chart(history, width = 160, height = 36) {
  const points = history.map((p) => p.rating);
  const title = svg("title");
  title.textContent = points.length ? `rating history: ${points.join(", ")}` : "no history yet";
  const el = svg("svg", { class: "spark", width, height, viewBox: `0 0 ${width} ${height}`, role: "img" }, title);
  if (points.length < 2) return el;
  const low = Math.min(...points);
  const span = Math.max(1, Math.max(...points) - low);
  const step = (width - 4) / (points.length - 1);
  const xy = points.map((p, i) => `${(2 + i * step).toFixed(1)},${(height - 2 - ((p - low) / span) * (height - 4)).toFixed(1)}`);
  el.append(svg("polyline", { points: xy.join(" ") }));
  return el;
}

// A table in a box of its own: on a phone a wide one scrolls there, never the page. The box
// takes the focus (arrow keys scroll it) and is named for a screen reader.
const scrolling = (label, table) =>
  h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": label }, table);

// The latest races' columns (on a phone, each cell's name: a row stacked, style.css).
const RACE_COLUMNS = ["ended", "game", "place", "time", "rating", "splits (Δ to best)", "replay"];

const when = (at) => new Date(at * 1000).toLocaleString();
const rating = (r) => (r === null || r === undefined ? "–" : String(r));

// What a race was, beside its game, when it moved no rating for a reason of its kind: a
// daily attempt is ranked on its day's board instead, a ghost race is never rated; any
// other unrated race is casual (its creator chose so).
const KINDS = { daily: "daily deal", ghost: "ghost race" };
const kindTag = (race) => KINDS[race.kind] ?? (race.rated ? null : "casual");

export async function render(root, { name }) {
  const page = Math.max(1, Number(new URLSearchParams(location.search).get("page")) || 1);
  let data;
  try {
    // As this browser's player: a deal its own daily attempt has raced is shown once it is over.
    data = await authed("GET", `/players/${encodeURIComponent(name)}?page=${page}`);
  } catch (error) {
    root.append(h("h1", {}, name), h("p", { class: "error" }, error.message));
    return;
  }
  const { player, stats, ratings, best, races, splits = [] } = data;
  // Asked under a name given up since (a link from an old race): the address says the
  // player's name now, so that a link copied from it lasts.
  if (player.name.toLowerCase() !== name.toLowerCase()) {
    history.replaceState(null, "", `/p/${encodeURIComponent(player.name)}${location.search}`);
  }
  // A game is named by its title, as on every other page (the id where /games has no title).
  const known = await games().catch(() => ({}));
  const title = (game) => known[game]?.title || game;
  document.title = `${player.name} · solrace`;
  add(
    root,
    h("h1", {}, player.name, player.bot ? h("span", { class: "tag bot" }, "bot") : null),
    player.names.length ? h("p", { class: "muted" }, `Formerly ${player.names.map((n) => n.name).join(", ")}`) : null,
    h("p", {}, `${counted(stats.races, "race")}, ${stats.won} won`, player.bot ? " · bots are never rated" : ""),
    h("h2", {}, "Ratings"),
    ratings.length
      ? scrolling("ratings", h("table", { class: "stats ratings" },
        h("thead", {}, h("tr", {}, h("th", {}, "game"), h("th", {}, "rating"), h("th", {}, "races"), h("th", {}, "history"))),
        h("tbody", {}, ratings.map((r) => h("tr", { dataset: { game: r.game } },
          h("td", {}, h("a", { href: `/top/${r.game}` }, title(r.game))),
          h("td", { title: r.provisional ? "provisional: not settled yet" : "" }, `${r.rating}${r.provisional ? "?" : ""}`),
          h("td", {}, r.races),
          h("td", {}, chart(r.history)))))))
      : h("p", { class: "muted" }, player.bot ? "Bots are not rated." : "No rated races yet."),
    best.length ? [h("h2", {}, "Best times"),
      scrolling("best times", h("table", { class: "stats" }, h("tbody", {}, best.map((b) => h("tr", {},
        h("td", {}, title(b.game)), h("td", {}, fmtSeconds(b.time), ` (${b.time.toFixed(2)} s)`), h("td", { class: "deal" }, b.seed ? `deal ${b.seed}` : "deal not public yet"))))))] : null,
    splits.length ? [h("h2", {}, "Splits"), scrolling("splits", splitsTable(splits, title))] : null,
    h("h2", {}, "Latest races"),
    races.items.length
      ? scrolling("latest races", h("table", { class: "stats races stack-narrow" },
        h("thead", {}, h("tr", {}, RACE_COLUMNS.map((c) => h("th", {}, c)))),
        h("tbody", {}, races.items.map((r) => h("tr", {}, [
          [when(r.ended_at)],
          [title(r.game), kindTag(r) ? h("span", { class: "muted" }, ` ${kindTag(r)}`) : ""],
          [`${r.place} of ${r.seats}`, r.won ? " · won" : ""],
          [r.time === null ? "–" : `${fmtSeconds(r.time)} (${r.time.toFixed(2)} s)`],
          [r.rating_after === null ? "–" : `${rating(r.rating_before)} → ${rating(r.rating_after)}`],
          [raceSplits(r)],
          [h("a", { href: `/replay/${r.race}` }, "watch"), " · ", h("a", { href: r.replay }, "NDJSON")],
        ].map((cell, i) => h("td", { class: i === 5 ? "splits" : null, dataset: { label: RACE_COLUMNS[i] } }, ...cell)))))))
      : h("p", { class: "muted" }, "No races yet."),
    h("p", { class: "pages" },
      page > 1 ? h("a", { href: `?page=${page - 1}`, rel: "prev" }, "← newer") : null,
      races.more ? h("a", { href: `?page=${page + 1}`, rel: "next" }, "older →") : null),
  );

}

const ms = (v) => (v === null || v === undefined ? null : v / 1000);

// Per game: the best run's splits, the best segments and their sum (docs/protocol.md 11).
function splitsTable(games, title) {
  return h("table", { class: "stats splits-best" },
    h("thead", {}, h("tr", {}, ["game", "best splits", "best segments", "sum of best"].map((c) => h("th", {}, c)))),
    h("tbody", {}, games.map((g) => h("tr", { dataset: { game: g.game } },
      h("td", {}, title(g.game)),
      h("td", {}, g.best ? g.best.map((v) => fmtSplit(ms(v))).join(" · ") : "no win yet",
        g.race ? [" ", h("a", { href: `/replay/${g.race}` }, "watch")] : null),
      h("td", {}, g.best_segments.map((v) => fmtSplit(ms(v))).join(" · ")),
      h("td", {}, g.sum_of_best === null ? "–" : fmtSplit(ms(g.sum_of_best)))))));
}

// A race's splits, each with its delta to the best of its game (in ms), said as the race
// page says one: "0:41.2 (-3.2 s)".
function raceSplits(r) {
  if (!r.splits) return "–";
  return r.splits.map((v, i) => {
    const d = r.delta?.[i];
    const delta = d === null || d === undefined ? "" : ` (${fmtDelta(ms(d), 0)})`;
    return `${fmtSplit(ms(v))}${delta}`;
  }).join(" · ");
}
