// The app's Messages tab, as Slack's agent messaging experience shows it: the suggested
// prompts the bot pinned at the top, then each conversation (every message the person writes
// there starts one: the bot answers in its thread) with its status line while a run works
// ("countersign is thinking…") and answers as they stream in, with their task cards. Opening the
// tab sends app_home_opened (tab "messages"); messages go to /_local/messages in the person's
// direct messages with the app, a reply to the conversation it answers.
"use strict";

const assistant = { replyTo: null, key: "" };

function openAssistant() {
  showPane("assistant");
  send("/_local/assistant/open", {});
  if (state.data) renderAssistant(state.data);
}

function assistantMessage(message) {
  if (message.bot_id && !message.blocks.some((b) => b.type !== "task_card")) {
    // a streamed answer: its markdown so far, then its task cards
    const node = messageNode({ ...message, blocks: [] });
    node.dataset.testid = message.streaming ? "streaming-answer" : "answer";
    const body = node.querySelector(".body");
    if (message.blocks.length) body.appendChild(renderBlocks(message.blocks, () => {}));
    if (message.streaming) body.appendChild(el("span", "cursor", "▍"));
    return node;
  }
  return messageNode(message);
}

function conversationNode(thread, botName) {
  const node = el("div", "conversation");
  node.dataset.testid = "conversation";
  node.dataset.ts = thread.thread_ts;
  if (thread.root) node.appendChild(assistantMessage(thread.root));
  const replies = el("div", "conversation-replies");
  thread.messages.forEach((m) => replies.appendChild(assistantMessage(m)));
  if (thread.status) {
    // plain text, as Slack shows a status line (the bot writes names there, not mentions)
    const status = el("div", "assistant-status");
    status.dataset.testid = "assistant-status";
    status.setAttribute("role", "status");
    status.textContent = `${botName} ${thread.status}`;
    replies.appendChild(status);
  }
  const reply = el("button", "reply-link", assistant.replyTo === thread.thread_ts ? "Replying here…" : "Reply");
  reply.type = "button";
  reply.dataset.testid = "conversation-reply";
  reply.addEventListener("click", () => { assistant.replyTo = thread.thread_ts; assistant.key = ""; renderAssistant(state.data); $("assistant-input").focus(); });
  replies.appendChild(reply);
  node.appendChild(replies);
  return node;
}

function renderAssistant(data) {
  const tab = data.assistant || { threads: [], prompts: [] };
  $("assistant-title").textContent = `${data.bot.name} · Messages`;
  const prompts = $("assistant-prompts");
  prompts.replaceChildren();
  if (tab.prompts && tab.prompts.length) {
    if (tab.prompts_title) prompts.appendChild(el("div", "prompts-title", esc(tab.prompts_title)));
    tab.prompts.forEach((p) => {
      const b = el("button", "prompt", esc(p.title));
      b.dataset.testid = "suggested-prompt";
      b.addEventListener("click", () => sendAssistant(p.message, null));
      prompts.appendChild(b);
    });
  }
  if (assistant.replyTo && !tab.threads.some((t) => t.thread_ts === assistant.replyTo)) assistant.replyTo = null;
  $("assistant-replying").classList.toggle("hidden", !assistant.replyTo);
  $("assistant-input").placeholder = assistant.replyTo ? "Reply in this conversation…" : `Message ${data.bot.name}`;
  const key = JSON.stringify([tab.threads, assistant.replyTo]);
  if (key !== assistant.key) {
    assistant.key = key;
    keepScroll($("assistant-messages"), () => $("assistant-messages").replaceChildren(
      ...tab.threads.map((t) => conversationNode(t, data.bot.name))));
  }
}

async function sendAssistant(text, threadTs) {
  if (!text.trim() || !state.data) return;
  await send("/_local/messages", { text, thread_ts: threadTs, channel: state.data.assistant.channel });
}

$("assistant-link").addEventListener("click", openAssistant);
$("assistant-replying-cancel").addEventListener("click", () => { assistant.replyTo = null; assistant.key = ""; renderAssistant(state.data); });
$("assistant-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("assistant-input");
  const text = input.value;
  input.value = "";
  sendAssistant(text, assistant.replyTo);
});
$("assistant-input").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("assistant-form").requestSubmit(); }
});
