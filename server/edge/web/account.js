// The account page (/account): who this browser plays as, and what can be done about it —
// choose a name, claim the account with a password or change it, see the devices signed in
// as the player and sign them out, sign in as another account, link a device with a
// one-time code, sign out (docs/protocol.md section 11).

import { h, add, clear } from "./dom.js";
import { authed, deviceLabel, isGuestName, me, shownName, signedIn, signOut } from "./identity.js";

const devicesOut = (n) =>
  n === 0 ? "No other device was signed in." : `${n} other device${n === 1 ? " was" : "s were"} signed out.`;

// When a device was last used, in words: its use is known to the minute.
function lastUsed(at) {
  const minutes = Math.floor((Date.now() / 1000 - at) / 60);
  if (minutes < 2) return "used just now";
  if (minutes < 60) return `used ${minutes} minutes ago`;
  if (minutes < 48 * 60) return `used ${Math.floor(minutes / 60)} hours ago`;
  return `last used ${new Date(at * 1000).toLocaleDateString()}`;
}

// The devices signed in as the player (each holds a key of theirs): which is this browser,
// and a "Sign out" for each other one (a lost phone) or all of them at once.
function devicesSection() {
  const list = h("ul", { class: "devices" });
  const message = h("p", { class: "message", role: "status" });
  const others = h("button", { type: "button", class: "secondary", id: "sign-out-others" }, "Sign out everywhere else");
  const section = h(
    "section",
    { class: "account-form", id: "devices" },
    h("h2", {}, "Devices"),
    h("p", { class: "muted" }, "Where you are signed in. Sign out a device you no longer use, or have lost: it plays as you no more."),
    list,
    others,
    message,
  );
  // One sign-out at a time, its button off until it is answered: a second click (a double
  // click) asked again, and a device's was refused (signed out already), everywhere
  // else's said that no other device was signed in.
  let acting = false;
  const act = async (work, button = null) => {
    if (acting) return;
    acting = true;
    if (button) button.disabled = true;
    message.className = "message";
    message.textContent = "";
    try {
      const said = await work();
      await show();
      message.textContent = said;
    } catch (error) {
      message.className = "message error";
      message.textContent = error.message + (error.code ? ` (${error.code})` : "");
    } finally {
      acting = false;
      if (button) button.disabled = false;
    }
  };
  const row = (device) =>
    h(
      "li",
      { dataset: { device: device.id }, class: device.current ? "current" : null },
      h("span", { class: "label" }, device.label || "A device with no name"),
      device.current ? h("span", { class: "tag" }, "this browser") : null,
      h("small", { class: "muted" },
        ` signed in ${new Date(device.created_at * 1000).toLocaleDateString()}, `,
        device.current ? "in use now" : lastUsed(device.last_used_at)),
      device.current
        ? null
        : h("button", {
          type: "button",
          class: "small",
          "aria-label": `Sign out ${device.label || "this device"}`,
          onclick: (event) => act(async () => {
            await authed("POST", `/me/devices/${encodeURIComponent(device.id)}/sign-out`);
            return `${device.label || "The device"} is signed out.`;
          }, event.currentTarget),
        }, "Sign out"),
    );
  const show = async () => {
    const { devices } = await authed("GET", "/me/devices");
    clear(list);
    add(list, devices.map(row));
    others.hidden = devices.every((device) => device.current);
  };
  const load = () => act(async () => "");
  others.addEventListener("click", () =>
    act(async () => devicesOut((await authed("POST", "/me/sign-out-others")).signed_out), others));
  return { section, show, load };
}

// A form whose `act` says what came of it, or null when the page is loaded again (a
// sign-in): its button stays off until then.
function form(id, title, fields, label, act) {
  const inputs = fields.map(([id, label, attrs]) => [label, h("input", { id, name: id, ...attrs })]);
  const message = h("p", { class: "message", role: "status" });
  const button = h("button", { type: "submit" }, label);
  const el = h(
    "form",
    { class: "account-form", id },
    h("h2", {}, title),
    inputs.map(([label, input]) => h("label", { class: "field" }, label, input)),
    button,
    message,
  );
  // Asked once, the button off until the answer: a second submit (a double click) asked
  // again. A second sign-in made a second key, which nobody held once the page was loaded
  // again; a second password change was refused (the first had changed it) and counted
  // against the sign-in limits; a second rename drew the page twice.
  let asking = false;
  // The second click of a double click asks nothing, even when the first's answer came
  // back before it (a busy browser handles it late) and gave the button back.
  button.addEventListener("click", (event) => {
    if (event.detail > 1) event.preventDefault();
  });
  el.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (asking) return;
    asking = true;
    button.disabled = true;
    message.className = "message";
    message.textContent = "";
    let said = "";
    try {
      said = await act(Object.fromEntries(inputs.map(([, i]) => [i.id, i.value])));
      message.textContent = said ?? "";
    } catch (error) {
      message.className = "message error";
      message.textContent = error.message + (error.code ? ` (${error.code})` : "");
    } finally {
      if (said !== null) {
        asking = false;
        button.disabled = false;
      }
    }
  });
  return el;
}

// Claiming gives the account a password to sign in with by its name; a guest's name
// (Guest-NNNN) signs nobody in, and the server refuses to claim under it. A guest is told
// to choose a name first, and offered no Claim that could only be refused.
function claimForm(guest, act) {
  const el = form("claim", "Claim this account", [
    ["password", "Password", { type: "password", minlength: "8", required: true, autocomplete: "new-password" }],
    ["again", "Again", { type: "password", minlength: "8", required: true, autocomplete: "new-password" }],
  ], "Claim", act);
  if (guest) {
    for (const control of el.querySelectorAll("input, button")) control.disabled = true;
    el.querySelector("h2").after(
      h("p", { class: "muted", id: "claim-needs-name" }, "Choose a name above first: you sign in with your name and password."));
  }
  return el;
}

export async function render(root) {
  const player = await me();
  if (!player) {
    root.append(h("p", { class: "error" }, "The server could not be reached: try again in a moment."));
    return;
  }
  const { player: now, names } = await authed("GET", "/me");
  const redraw = async () => render(clear(root));
  const devices = devicesSection();
  // Read before the page is drawn: drawn after it, the list pushed every form below it
  // down, from under a pointer about to click one (a device's "Sign out" could come there).
  await devices.load();
  add(
    root,
    h("h1", {}, shownName(now)),
    h("p", { class: "muted" },
      now.claimed ? "Your account has a password: sign in with it anywhere." :
        "Anonymous: this browser alone plays as you. Choose a name and a password to sign in elsewhere.",
      " ", h("a", { href: `/p/${encodeURIComponent(now.name)}` }, "Your profile")),
    names.length ? h("p", { class: "muted" }, `Formerly: ${names.map((n) => n.name).join(", ")}`) : null,
    form("rename", "Name", [["name", "New name", { value: now.name, maxlength: "20", required: true, autocomplete: "username" }]],
      "Change name", async ({ name }) => {
        // Without the spaces around it, as the lobby and the race page take a name (a
        // phone's keyboard puts one after a word it completes).
        const answer = await authed("POST", "/me/name", { name: name.trim() });
        await signedIn(null, answer.player);
        await redraw();
        return "";
      }),
    now.claimed ? null : claimForm(isGuestName(now.name), async ({ password, again }) => {
      if (password !== again) throw new Error("the two passwords differ");
      const answer = await authed("POST", "/me/claim", { password });
      await signedIn(null, answer.player);
      await redraw();
      return "";
    }),
    now.claimed ? form("change-password", "Change password", [
      ["current-password", "Current password", { type: "password", required: true, autocomplete: "current-password" }],
      ["new-password", "New password", { type: "password", minlength: "8", required: true, autocomplete: "new-password" }],
      ["new-password-again", "Again", { type: "password", minlength: "8", required: true, autocomplete: "new-password" }],
    ], "Change password", async (values) => {
      if (values["new-password"] !== values["new-password-again"]) throw new Error("the two new passwords differ");
      const answer = await authed("POST", "/me/password", { password: values["current-password"], new_password: values["new-password"] });
      document.getElementById("change-password").reset();
      await devices.show();
      return `Your password is changed. ${devicesOut(answer.signed_out)}`;
    }) : null,
    devices.section,
    form("make-code", "Link another device", [], "Make a code", async () => {
      const answer = await authed("POST", "/me/link");
      const minutes = Math.max(1, Math.round((answer.expires_at - Date.now() / 1000) / 60));
      return `On the other device, within ${minutes} minutes, enter the code ${answer.code}`;
    }),
    form("use-code", "Use a code from another device", [["code", "Code", { required: true, autocomplete: "off" }]],
      "Sign in", async ({ code }) => {
        const answer = await authed("POST", "/link", { code, label: deviceLabel() });
        await signedIn(answer.key, answer.player);
        location.reload();
        return null;
      }),
    form("sign-in", "Sign in to another account", [
      ["login-name", "Name", { required: true, autocomplete: "username" }],
      ["login-password", "Password", { type: "password", required: true, autocomplete: "current-password" }],
    ], "Sign in", async (values) => {
      const body = { name: values["login-name"].trim(), password: values["login-password"], label: deviceLabel() };
      const answer = await authed("POST", "/sign-in", body);
      await signedIn(answer.key, answer.player);
      location.reload();
      return null;
    }),
    form("sign-out", "Sign out", [], "Sign out of this browser", async () => {
      await signOut();
      location.reload();
      return null;
    }),
  );
}
