// The local workspace page: renders the workspace state (messages with their Block Kit JSON,
// ephemeral notes, open modals) and sends what the person does to /_local/*, where the
// emulator turns it into Slack's signed deliveries to the bot.
"use strict";

const state = {
  user: localStorage.getItem("countersign.user") || "",
  since: -1,
  data: null,
  thread: null, // ts of the open thread
  pane: "channel", // or "home", "assistant"
  viewKey: "",
  homeKey: "",
  seen: new Set(), // ts of the ephemeral notes already seen
  seenUser: null,
};

const TEXT = {
  selfApproval: (others) => "You asked for this, so you can’t approve it yourself. To decide it, " +
    `switch “acting as” (at the top) to ${others}.`,
  homeLoading: "Opening your Home tab…",
};

// -- names, messages and threads ------------------------------------------------------------
nameOf = (id) => {
  const data = state.data;
  if (data && id === data.bot.id) return data.bot.name;
  const person = data && data.people.find((p) => p.id === id);
  return person ? person.name : id;
};

channelName = (id) => (state.data && state.data.channels && state.data.channels[id]) || id;
groupHandle = (id) => (state.data && state.data.groups && state.data.groups[id]) || id;

const clock = (ts) => new Date(Number(ts) * 1000).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });

function messageNode(message, replies) {
  const bot = Boolean(message.bot_id);
  const node = el("div", "message" + (message.ephemeral ? " ephemeral" : ""));
  node.dataset.ts = message.ts;
  node.dataset.testid = message.blocks.some((b) => b.type === "actions" || b.type === "header") ? "card" : "message";
  const name = nameOf(message.user);
  node.appendChild(el("div", "avatar " + (bot ? "bot" : "person"), esc(name.slice(0, 1).toUpperCase())));
  const body = el("div", "body");
  body.appendChild(el("div", "meta", `<span class="name">${esc(name)}</span>` +
    (bot ? '<span class="app">APP</span> ' : "") + esc(clock(message.ts))));
  if (message.ephemeral) body.appendChild(el("div", "only-you", "Only visible to you"));
  if (message.blocks.length) {
    body.appendChild(renderBlocks(message.blocks, (element, b, block) => click(message, element, b, block)));
    const hint = selfApprovalHint(message);
    if (hint) body.appendChild(el("div", "self-hint", esc(hint)));
  } else {
    body.appendChild(el("div", "text", mrkdwn(message.text)));
  }
  if (replies !== undefined && replies > 0) {
    const link = el("button", "replies", `${replies} ${replies === 1 ? "reply" : "replies"}`);
    link.addEventListener("click", () => openThread(message.ts));
    body.appendChild(link);
  }
  node.appendChild(body);
  return node;
}

// Where the policy in force forbids self-approval the card says so (its context block
// "approval-context-not-self"): on the requester's own pending card, say who can decide it
// here (a hint of this page only; the bot's rules decide).
function selfApprovalHint(message) {
  const data = state.data;
  const approve = message.blocks.some((b) => (b.elements || []).some((e) => e.action_id === data.approve_action));
  const notSelf = message.blocks.some((b) => b.block_id === "approval-context-not-self");
  const root = data.messages.find((m) => m.ts === message.thread_ts);
  if (!approve || !notSelf || !root || root.bot_id || root.user !== state.user) return "";
  const others = data.people.filter((p) => p.id !== state.user).map((p) => p.name);
  return others.length ? TEXT.selfApproval(others.join(" or ")) : "";
}

function keepScroll(container, fill) {
  const atBottom = container.scrollHeight - container.scrollTop - container.clientHeight < 40;
  const top = container.scrollTop;
  container.innerHTML = "";
  fill();
  container.scrollTop = atBottom ? container.scrollHeight : top;
}

// Show these messages in the container, keeping the node of every message that did not change
// (a poll answers on any change in the workspace: rebuilding everything would reset what a
// person is looking at, and detach what a test holds).
function showMessages(container, items) {
  const before = container.messageNodes || new Map();
  const after = new Map();
  const nodes = items.map(([message, replies]) => {
    const key = JSON.stringify([message, replies, state.user, selfApprovalHint(message)]);
    const kept = before.get(message.ts);
    const node = kept && kept.key === key ? kept.node : messageNode(message, replies);
    after.set(message.ts, { key, node });
    return node;
  });
  container.messageNodes = after;
  const same = nodes.length === container.children.length && nodes.every((n, i) => container.children[i] === n);
  if (same) return;
  keepScroll(container, () => container.replaceChildren(...nodes));
}

function render() {
  const data = state.data;
  $("model").textContent = data.model;
  $("channel-name").textContent = data.channel.name;
  $("channel-title").textContent = data.channel.name;
  const select = $("user-select");
  if (!select.options.length) {
    data.people.forEach((p) => select.appendChild(new Option(p.name, p.id)));
  }
  select.value = data.user;
  const roots = data.messages.filter((m) => !m.thread_ts || m.thread_ts === m.ts);
  showMessages($("messages"), roots.map((m) => [m,
    data.messages.filter((r) => r.thread_ts === m.ts && r.ts !== m.ts && !r.ephemeral).length]));
  if (state.thread) {
    const thread = data.messages.filter((m) => m.ts === state.thread || m.thread_ts === state.thread);
    showMessages($("thread-messages"), thread.map((m) => [m, undefined]));
  }
  renderHome(data.home);
  if (state.pane === "assistant") renderAssistant(data);
  renderView(data.views[data.views.length - 1]);
  noticeEphemerals(data);
}

// A new ephemeral note for this person (e.g. "already approved by @alex" after losing a race)
// is also shown in the banner: it may land in a thread that is not open.
function noticeEphemerals(data) {
  const fresh = data.messages.filter((m) => m.ephemeral && !state.seen.has(m.ts));
  fresh.forEach((m) => state.seen.add(m.ts));
  if (state.seenUser !== data.user) {
    state.seenUser = data.user; // notes from before this page (or this person) are old news
    return;
  }
  const last = fresh[fresh.length - 1];
  if (last) showNotice(el("div", "", mrkdwn(last.text)).textContent);
}

function showPane(pane) {
  state.pane = pane;
  $("channel").classList.toggle("hidden", pane !== "channel");
  $("home").classList.toggle("hidden", pane !== "home");
  $("assistant").classList.toggle("hidden", pane !== "assistant");
  $("assistant-link").classList.toggle("active", pane === "assistant");
  $("thread").classList.toggle("hidden", pane !== "channel" || !state.thread);
  document.body.classList.toggle("thread-open", pane === "channel" && Boolean(state.thread));
  $("channel-link").classList.toggle("active", pane === "channel");
  $("home-link").classList.toggle("active", pane === "home");
}

function openThread(ts) {
  state.thread = ts;
  $("thread").dataset.ts = ts;
  showPane("channel");
  if (state.data) render();
}

// -- the Home tab: opening it sends app_home_opened; the bot answers with views.publish -------
function openHome() {
  showPane("home");
  if (!state.data || !state.data.home) $("home-blocks").textContent = TEXT.homeLoading;
  state.homeKey = "";
  send("/_local/home", {});
}

function renderHome(home) {
  const key = home ? `${home.id}:${home.hash}` : "";
  if (!home || key === state.homeKey) return;
  state.homeKey = key;
  keepScroll($("home-blocks"), () => $("home-blocks").appendChild(
    renderBlocks(home.blocks || [], (element, b, block) => clickHome(element, b, block))));
}

async function clickHome(element, b, block) {
  if (element.confirm && !(await confirmDialog(element.confirm))) return;
  b.disabled = true;
  await send("/_local/home/actions", { block_id: block.block_id, action_id: element.action_id, value: element.value });
}

// A permalink (from chat.getPermalink) points at this page: #thread=<ts> opens that thread.
function followLink(hash) {
  const match = /^#thread=([0-9.]+)/.exec(hash || "");
  if (match) openThread(match[1]);
  return Boolean(match);
}

// A message link as Slack builds them (/archives/<channel>/p<ts>?thread_ts=<ts>) on this page's
// workspace URL: the thread opens in place (the server redirects a link opened elsewhere).
function followArchiveLink(link) {
  const match = /^\/archives\/[A-Z0-9]+\/p(\d+)$/.exec(link.pathname);
  if (!match) return false;
  const digits = match[1];
  openThread(link.searchParams.get("thread_ts") || `${digits.slice(0, -6)}.${digits.slice(-6)}`);
  return true;
}

// -- talking to the emulator ---------------------------------------------------------------
async function send(path, body) {
  let response;
  try {
    response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ user: state.user, ...body }),
    });
  } catch (error) {
    showNotice("The server is unreachable: nothing was sent. Try again once it is back.");
    return { ok: false, status: 0 };
  }
  if (!response.ok) {
    showNotice(response.status === 404
      ? "That message or button no longer exists here (the page was stale); nothing was changed."
      : `The server refused that (HTTP ${response.status}); nothing was changed. Try again.`);
    return { ok: false, status: response.status };
  }
  const answer = await response.json();
  if (answer.ok === false && answer.status) {
    showNotice(`The bot could not take that (HTTP ${answer.status}); nothing was changed. Try again.`);
  }
  return answer;
}

function showNotice(text) {
  const notice = $("notice");
  notice.textContent = text;
  notice.classList.remove("hidden");
  clearTimeout(showNotice.timer);
  showNotice.timer = setTimeout(() => notice.classList.add("hidden"), 8000);
}

// The button is sent as this page shows it: if someone decided first (another tab, another
// person), the bot gets the click anyway, as from a Slack client not refreshed yet, and its
// ephemeral answer says who won.
async function click(message, element, b, block) {
  if (element.confirm && !(await confirmDialog(element.confirm))) return;
  b.disabled = true;
  try {
    await send("/_local/actions", {
      ts: message.ts, action_id: element.action_id, value: element.value,
      block_id: block ? block.block_id : undefined,
    });
  } finally {
    setTimeout(() => { b.disabled = false; }, 300);
  }
}

async function post(textarea, threadTs) {
  const text = textarea.value.trim();
  if (!text) return;
  textarea.value = "";
  const answer = await send("/_local/messages", { text, thread_ts: threadTs });
  if (answer.ok && !threadTs) openThread(answer.ts);
}

async function poll() {
  for (;;) {
    try {
      const query = new URLSearchParams({ user: state.user, since: String(state.since) });
      const response = await fetch(`/_local/state?${query}`);
      if (!response.ok) throw new Error(String(response.status));
      const data = await response.json();
      if (data.user !== state.user && state.user) continue;
      state.data = data;
      state.user = data.user;
      state.since = data.version;
      $("offline").classList.add("hidden");
      render();
    } catch (error) {
      $("offline").classList.remove("hidden");
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

// -- modals --------------------------------------------------------------------------------
function renderView(view) {
  const overlay = $("overlay");
  const key = view ? `${view.id}:${view.hash}:${JSON.stringify(view.blocks)}` : "";
  if (key === state.viewKey) return;
  state.viewKey = key;
  overlay.innerHTML = "";
  overlay.classList.toggle("hidden", !view);
  if (!view) return;
  const modal = el("form", "modal");
  modal.dataset.testid = "modal";
  modal.dataset.callbackId = view.callback_id || "";
  modal.appendChild(el("div", "title", textObject(view.title)));
  const content = el("div", "content");
  const inputs = [];
  (view.blocks || []).forEach((block, i) => {
    if (block.type === "input") inputs.push(inputBlock(block, i, content));
    else content.appendChild(renderBlocks([block], () => {}));
  });
  modal.appendChild(content);
  const buttons = el("div", "buttons");
  const close = el("button", "btn", textObject(view.close || { type: "plain_text", text: "Cancel" }));
  close.type = "button";
  close.dataset.role = "close";
  close.addEventListener("click", () => send(`/_local/views/${view.id}/close`, {}));
  buttons.appendChild(close);
  if (view.submit) {
    const submit = el("button", "btn primary", textObject(view.submit));
    submit.type = "submit";
    submit.dataset.role = "submit";
    buttons.appendChild(submit);
  }
  modal.appendChild(buttons);
  modal.addEventListener("submit", async (event) => {
    event.preventDefault();
    inputs.forEach((i) => i.showError(""));
    const missing = inputs.filter((i) => !i.optional && i.empty());
    missing.forEach((i) => i.showError("Please complete this required field."));
    if (missing.length) return;
    const values = {};
    inputs.forEach((i) => { values[i.blockId] = { [i.actionId]: i.value() }; });
    const answer = await send(`/_local/views/${view.id}/submit`, { values });
    if (answer.errors) inputs.forEach((i) => i.showError(answer.errors[i.blockId] || ""));
  });
  overlay.appendChild(modal);
}

function confirmDialog(confirm) {
  return new Promise((resolve) => {
    const overlay = el("div", "overlay");
    const box = el("div", "modal");
    box.dataset.testid = "confirm";
    box.appendChild(el("div", "title", textObject(confirm.title)));
    box.appendChild(el("div", "content confirm-text", textObject(confirm.text)));
    const buttons = el("div", "buttons");
    const done = (answer) => { overlay.remove(); resolve(answer); };
    const deny = el("button", "btn", textObject(confirm.deny || { type: "plain_text", text: "Cancel" }));
    deny.dataset.role = "deny";
    deny.addEventListener("click", () => done(false));
    const ok = el("button", "btn " + (confirm.style || "primary"), textObject(confirm.confirm || { type: "plain_text", text: "Confirm" }));
    ok.dataset.role = "confirm";
    ok.addEventListener("click", () => done(true));
    buttons.append(deny, ok);
    box.appendChild(buttons);
    overlay.appendChild(box);
    document.body.appendChild(overlay);
  });
}

// -- wiring ------------------------------------------------------------------------------
function composer(form, textarea, threadTs) {
  form.addEventListener("submit", (event) => { event.preventDefault(); post(textarea, threadTs()); });
  textarea.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); post(textarea, threadTs()); }
  });
}

composer($("composer"), $("composer-input"), () => null);
composer($("thread-composer"), $("thread-input"), () => state.thread);
$("thread-close").addEventListener("click", () => {
  state.thread = null;
  showPane("channel");
});
$("home-link").addEventListener("click", openHome);
$("channel-link").addEventListener("click", () => showPane("channel"));
$("home").addEventListener("click", (event) => {
  const link = event.target.closest("a[href]");
  if (!link || link.origin !== location.origin) return;
  if (followArchiveLink(new URL(link.href)) || followLink(link.hash)) event.preventDefault();
});
window.addEventListener("hashchange", () => followLink(location.hash));
$("user-select").addEventListener("change", (event) => {
  state.user = event.target.value;
  localStorage.setItem("countersign.user", state.user);
  state.since = -1;
  state.viewKey = null; // whatever is open is the other person's: never keep it on screen
  renderView(undefined);
  state.homeKey = "";
  $("home-blocks").textContent = "";
  if (state.pane === "home") openHome();
  fetch(`/_local/state?${new URLSearchParams({ user: state.user, since: "-1" })}`)
    .then((r) => r.json()).then((data) => {
      state.data = data;
      state.since = data.version;
      render();
    });
});
followLink(location.hash);
poll();
