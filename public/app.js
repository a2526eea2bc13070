// @ts-check
// The playground: a chat against this edge's public endpoints (GET /v1/models, POST
// /v1/chat/completions, /v1/responses, /v1/messages), streamed and parsed here with fetch and
// ReadableStream. No imports, no build step. The API key stays in this page's memory only.

/** @param {string} id */
const $ = (id) => /** @type {any} */ (document.getElementById(id));

/** @typedef {{ role: "user" | "assistant", content: string }} Turn */
/** @typedef {{ input?: number, output?: number, cached?: number }} Usage */
/**
 * @typedef {{ token: string, bytes?: number[], logprob: number, top?: Array<{ token: string, logprob: number }> }}
 * Token
 */
/**
 * @typedef {{ text?: string, reasoning?: string, call?: { slot: number, name?: string, args?: string },
 *   usage?: Usage, tokens?: Token[], error?: string }} Delta
 */

/** @type {Turn[]} */
let turns = [];
/** @type {AbortController | undefined} */
let running;

function headers() {
  /** @type {Record<string, string>} */
  const h = { "content-type": "application/json" };
  const key = $("key").value.trim();
  if (key !== "") {
    h.authorization = `Bearer ${key}`;
    if ($("protocol").value === "messages") h["x-api-key"] = key;
  }
  return h;
}

async function loadModels() {
  try {
    const response = await fetch("/v1/models", { headers: headers() });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error?.message ?? response.statusText);
    const select = $("model");
    const current = select.value;
    select.replaceChildren(
      ...body.data.map((/** @type {{ id: string }} */ m) => new Option(m.id, m.id, false, m.id === current)),
    );
  } catch (error) {
    addTurn("error", `Could not list models: ${error instanceof Error ? error.message : error}`);
  }
}

/** Tools as typed, in chat-completions or bare form, as the chosen protocol wants them. */
function tools() {
  const text = $("tools").value.trim();
  if (text === "") return undefined;
  const list = JSON.parse(text);
  if (!Array.isArray(list)) throw new Error("Tools must be a JSON array");
  return list.map((t) => {
    const f = t.function ?? t;
    const parameters = f.parameters ?? f.input_schema ?? { type: "object" };
    const described = f.description === undefined ? {} : { description: f.description };
    switch ($("protocol").value) {
      case "chat":
        return { type: "function", function: { name: f.name, ...described, parameters } };
      case "responses":
        return { type: "function", name: f.name, ...described, parameters };
      default:
        return { name: f.name, ...described, input_schema: parameters };
    }
  });
}

/** @param {string} id */
function numberField(id) {
  const value = $(id).value;
  return value === "" ? undefined : Number(value);
}

/** The request for the chosen protocol: [path, body]. @returns {[string, object]} */
function request() {
  const protocol = $("protocol").value;
  const system = $("system").value.trim();
  const common = {
    model: $("model").value,
    stream: true,
    temperature: numberField("temperature"),
    top_p: numberField("top_p"),
    tools: tools(),
  };
  const max = numberField("max_tokens");
  if (protocol === "responses") {
    return ["/v1/responses", { ...common, input: turns, instructions: system || undefined, max_output_tokens: max }];
  }
  if (protocol === "messages") {
    // Adaptive thinking shows the reasoning as thinking blocks, with no budget of its own.
    return [
      "/v1/messages",
      {
        ...common,
        messages: turns,
        system: system || undefined,
        max_tokens: max ?? 512,
        thinking: { type: "adaptive" },
      },
    ];
  }
  const messages = system === "" ? turns : [{ role: "system", content: system }, ...turns];
  const logprobs = $("logprobs").checked ? { logprobs: true, top_logprobs: 3 } : {};
  return [
    "/v1/chat/completions",
    { ...common, messages, max_tokens: max, stream_options: { include_usage: true }, ...logprobs },
  ];
}

/**
 * Server-sent events from a response body: { event, data } per event.
 * @param {ReadableStream<Uint8Array>} body
 */
async function* events(body) {
  const reader = body
    .pipeThrough(/** @type {TransformStream<Uint8Array, string>} */ (new TextDecoderStream()))
    .getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, "\n");
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length > 0) yield { event, data: data.join("\n") };
    }
  }
}

/** @param {any} e @returns {Delta[]} */
function chatDeltas(e) {
  const out = [];
  if (e.error) out.push({ error: e.error.message });
  const choice = e.choices?.[0];
  const delta = choice?.delta ?? {};
  if (delta.reasoning_content) out.push({ reasoning: delta.reasoning_content });
  const tokens = choice?.logprobs?.content?.map((/** @type {any} */ t) => ({
    token: t.token,
    bytes: t.bytes,
    logprob: t.logprob,
    top: t.top_logprobs,
  }));
  if (typeof delta.content === "string" && tokens?.length) out.push({ text: delta.content, tokens });
  else if (delta.content) out.push({ text: delta.content });
  for (const call of delta.tool_calls ?? [])
    out.push({ call: { slot: call.index, name: call.function?.name, args: call.function?.arguments } });
  const u = e.usage;
  if (u)
    out.push({
      usage: { input: u.prompt_tokens, output: u.completion_tokens, cached: u.prompt_tokens_details?.cached_tokens },
    });
  return out;
}

/** @param {any} e @returns {Delta[]} */
function responsesDeltas(e) {
  switch (e.type) {
    case "response.output_text.delta":
      return [{ text: e.delta }];
    case "response.reasoning_text.delta":
      return [{ reasoning: e.delta }];
    case "response.output_item.added":
      return e.item.type === "function_call" ? [{ call: { slot: e.output_index, name: e.item.name } }] : [];
    case "response.function_call_arguments.delta":
      return [{ call: { slot: e.output_index, args: e.delta } }];
    case "response.completed":
    case "response.incomplete": {
      const u = e.response.usage;
      return u
        ? [{ usage: { input: u.input_tokens, output: u.output_tokens, cached: u.input_tokens_details?.cached_tokens } }]
        : [];
    }
    case "response.failed":
      return [{ error: e.response.error?.message ?? "failed" }];
    case "error":
      return [{ error: e.message ?? e.error?.message }];
    default:
      return [];
  }
}

/** @param {any} e @returns {Delta[]} */
function messagesDeltas(e) {
  switch (e.type) {
    case "message_start": {
      const u = e.message.usage;
      return [
        { usage: { input: u.input_tokens + (u.cache_read_input_tokens ?? 0), cached: u.cache_read_input_tokens } },
      ];
    }
    case "content_block_start":
      return e.content_block.type === "tool_use" ? [{ call: { slot: e.index, name: e.content_block.name } }] : [];
    case "content_block_delta": {
      const d = e.delta;
      if (d.type === "text_delta") return [{ text: d.text }];
      if (d.type === "thinking_delta") return [{ reasoning: d.thinking }];
      if (d.type === "input_json_delta") return [{ call: { slot: e.index, args: d.partial_json } }];
      return [];
    }
    case "message_delta":
      return [{ usage: { output: e.usage.output_tokens } }];
    case "error":
      return [{ error: e.error.message }];
    default:
      return [];
  }
}

const PARSERS = { chat: chatDeltas, responses: responsesDeltas, messages: messagesDeltas };

/** @param {string} kind @param {string} text */
function addTurn(kind, text) {
  const div = document.createElement("div");
  div.className = `turn ${kind}`;
  div.textContent = text;
  $("log").append(div);
  div.scrollIntoView({ block: "end" });
  return div;
}

/** @param {string} tag @param {string} className @param {HTMLElement} parent */
function child(tag, className, parent) {
  const el = document.createElement(tag);
  el.className = className;
  parent.append(el);
  return el;
}

/** One assistant reply on screen: reasoning apart from the answer, tool calls, and stats. */
function replyView() {
  const turn = addTurn("assistant", "");
  const reasoning = child("div", "reasoning", turn);
  reasoning.hidden = true;
  const answer = child("div", "answer", turn);
  /** @type {Map<number, { name: string, args: string, el: HTMLElement }>} */
  const calls = new Map();
  const stats = child("div", "stats", turn);
  /** @type {Token[]} */
  let pending = [];
  return {
    answer,
    /** @param {Delta} d */
    show(d) {
      if (d.reasoning) {
        reasoning.hidden = false;
        reasoning.append(d.reasoning);
      }
      if (d.tokens && d.text === "") {
        // Text-less tokens: markup (dropped), or part of a character (shown with the rest of it).
        pending.push(...d.tokens.filter(partial));
      } else if (d.tokens && d.text) {
        answer.append(tokenSpan([...pending, ...d.tokens], d.text));
        pending = [];
      } else if (d.text) answer.append(d.text);
      if (d.call) {
        const call = calls.get(d.call.slot) ?? { name: "", args: "", el: child("div", "tool", turn) };
        calls.set(d.call.slot, call);
        call.name ||= d.call.name ?? "";
        call.args += d.call.args ?? "";
        call.el.textContent = `call ${call.name}(${call.args})`;
        turn.append(stats);
      }
      turn.scrollIntoView({ block: "end" });
    },
    /** @param {string} text */
    stats(text) {
      stats.textContent = text;
    },
  };
}

const strict = new TextDecoder("utf-8", { fatal: true });
/** Whether a token's bytes are only part of a UTF-8 character. @param {Token} t */
function partial(t) {
  try {
    strict.decode(new Uint8Array(t.bytes ?? []));
    return false;
  } catch {
    return true;
  }
}

/**
 * A piece of text shaded by how unlikely its tokens were; their probabilities and the
 * alternatives show on hover.
 * @param {Token[]} tokens @param {string} text
 */
function tokenSpan(tokens, text) {
  const span = document.createElement("span");
  span.className = "tok";
  span.textContent = text;
  const p = Math.exp(tokens.reduce((sum, t) => sum + t.logprob, 0));
  span.style.background = `rgba(255, 140, 0, ${(0.6 * (1 - p)).toFixed(3)})`;
  const percent = (/** @type {number} */ logprob) => `${(100 * Math.exp(logprob)).toFixed(1)}%`;
  span.title = tokens
    .flatMap((t) => [
      `${JSON.stringify(t.token)} ${percent(t.logprob)}`,
      ...(t.top ?? []).map((a) => `  ${JSON.stringify(a.token)} ${percent(a.logprob)}`),
    ])
    .join("\n");
  return span;
}

/** @param {number} started @param {number | undefined} first @param {Usage} usage @param {boolean} stopped */
function statsLine(started, first, usage, stopped) {
  const now = performance.now();
  const parts = [];
  if (first !== undefined) parts.push(`TTFT ${Math.round(first - started)} ms`);
  if (first !== undefined && usage.output !== undefined && now > first)
    parts.push(`${(usage.output / ((now - first) / 1000)).toFixed(1)} tok/s`);
  if (usage.input !== undefined) parts.push(`in ${usage.input} (cached ${usage.cached ?? 0})`);
  if (usage.output !== undefined) parts.push(`out ${usage.output}`);
  if (stopped) parts.push("stopped");
  return parts.join(" · ");
}

async function send() {
  const text = $("prompt").value.trim();
  if (text === "" || running) return;
  const protocol = /** @type {"chat" | "responses" | "messages"} */ ($("protocol").value);
  addTurn("user", text);
  turns.push({ role: "user", content: text });
  $("prompt").value = "";
  const view = replyView();
  const controller = new AbortController();
  running = controller;
  $("send").disabled = true;
  $("stop").disabled = false;
  const started = performance.now();
  /** @type {number | undefined} */
  let first;
  /** @type {Usage} */
  const usage = {};
  try {
    const [path, body] = request();
    const response = await fetch(path, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (!response.ok || response.body === null) {
      const error = await response.json().catch(() => ({}));
      throw new Error(error.error?.message ?? `${response.status} ${response.statusText}`);
    }
    for await (const { data } of events(response.body)) {
      if (data === "[DONE]") break;
      for (const d of PARSERS[protocol](JSON.parse(data))) {
        if (d.error) throw new Error(d.error);
        if (first === undefined && (d.text || d.reasoning || d.call || d.tokens)) first = performance.now();
        if (d.usage)
          Object.assign(usage, Object.fromEntries(Object.entries(d.usage).filter(([, v]) => v !== undefined)));
        view.show(d);
      }
    }
    view.stats(statsLine(started, first, usage, false));
  } catch (error) {
    if (controller.signal.aborted) view.stats(statsLine(started, first, usage, true));
    else {
      addTurn("error", error instanceof Error ? error.message : String(error));
      // A message that got no answer is not sent again with the next one.
      if (view.answer.textContent === "") turns.pop();
    }
  } finally {
    const answer = view.answer.textContent ?? "";
    if (answer !== "") turns.push({ role: "assistant", content: answer });
    running = undefined;
    $("send").disabled = false;
    $("stop").disabled = true;
  }
}

$("composer").addEventListener("submit", (/** @type {Event} */ e) => {
  e.preventDefault();
  void send();
});
$("prompt").addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
  if (e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    void send();
  }
});
$("stop").addEventListener("click", () => running?.abort());
$("clear").addEventListener("click", () => {
  turns = [];
  $("log").replaceChildren();
});
$("key").addEventListener("change", () => void loadModels());
void loadModels();

export {};
