// The app's agent view (Slack's assistant threads): each person's threads with the bot, their
// title and suggested prompts, the status line while a run works ("countersign is thinking…"),
// and answers as they stream in, with their task cards. Messages go to /_local/messages in the
// person's direct messages with the app; a new thread to /_local/assistant/threads.
"use strict";

const assistant = { thread: null, key: "" };

function assistantThreads(data) {
  return (data.assistant && data.assistant.threads) || [];
}

function openAssistant() {
  showPane("assistant");
  if (state.data) renderAssistant(state.data);
}

async function newAssistantThread() {
  const answer = await send("/_local/assistant/threads", {});
  if (answer.thread_ts) assistant.thread = answer.thread_ts;
  openAssistant();
}

function assistantMessage(message) {
  if (!message.blocks.some((b) => b.type !== "task_card")) {
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

function renderAssistant(data) {
  const threads = assistantThreads(data);
  if (!assistant.thread || !threads.some((t) => t.thread_ts === assistant.thread)) {
    assistant.thread = threads.length ? threads[0].thread_ts : null;
  }
  const list = $("assistant-threads");
  list.replaceChildren(...threads.map((t) => {
    const b = el("button", "assistant-thread" + (t.thread_ts === assistant.thread ? " active" : ""),
      esc(t.title || "New chat"));
    b.addEventListener("click", () => { assistant.thread = t.thread_ts; renderAssistant(state.data); });
    return b;
  }));
  const thread = threads.find((t) => t.thread_ts === assistant.thread);
  $("assistant-title").textContent = thread ? (thread.title || "New chat") : "Assistant";
  $("assistant-composer").classList.toggle("hidden", !thread);
  const prompts = $("assistant-prompts");
  prompts.replaceChildren();
  if (thread && thread.prompts.length && !thread.messages.some((m) => !m.bot_id)) {
    if (thread.prompts_title) prompts.appendChild(el("div", "prompts-title", esc(thread.prompts_title)));
    thread.prompts.forEach((p) => {
      const b = el("button", "prompt", esc(p.title));
      b.dataset.testid = "suggested-prompt";
      b.addEventListener("click", () => sendAssistant(p.message));
      prompts.appendChild(b);
    });
  }
  const status = $("assistant-status");
  status.classList.toggle("hidden", !(thread && thread.status));
  // plain text, as Slack shows a status line (the bot writes names there, not mentions)
  status.textContent = thread && thread.status ? `${data.bot.name} ${thread.status}` : "";
  const messages = thread ? thread.messages : [];
  const key = JSON.stringify(messages);
  if (key !== assistant.key) {
    assistant.key = key;
    keepScroll($("assistant-messages"), () => $("assistant-messages").replaceChildren(...messages.map(assistantMessage)));
  }
}

async function sendAssistant(text) {
  if (!assistant.thread || !text.trim()) return;
  await send("/_local/messages", { text, thread_ts: assistant.thread, channel: state.data.assistant.channel });
}

$("assistant-link").addEventListener("click", openAssistant);
$("assistant-new").addEventListener("click", newAssistantThread);
$("assistant-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("assistant-input");
  const text = input.value;
  input.value = "";
  sendAssistant(text);
});
$("assistant-input").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("assistant-form").requestSubmit(); }
});
