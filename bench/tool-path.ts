// `npm run bench:tools` (~3 minutes, not part of `npm run bench`): what a tool request costs on a
// family twin, as a newcomer meets it, beside llama-server. Two servers on 127.0.0.1, each started as
// a user starts it with no settings: this project by `npm start` (EDGE_RUNTIME=node, MODEL=the twin)
// and llama-server of llama.cpp's default build (`npm run bench:peer-build -- --variant default`) by
// `llama-server -m <twin> --jinja`. From this process, outside both, streamed chat requests of two
// kinds, one at a time: a plain question, and the same with a tool offered (the twin calls it: the
// template's tool prompt, the call grammar, the reply parser). Per server and kind: time to the first
// delta and to the end, the medians of `--rounds` rounds of `--requests` requests (the servers take
// turns going first), and the first request of each kind after start apart (a model's first chat
// decides its renderer and builds its grammars). The tool path's cost is the tools row less the
// plain one, on each server. Figures: docs/performance.md.
import { parseArgs } from "node:util";
import { ensureModels, FAMILY_TWINS, type FamilyTwin } from "../gguf/models.js";
import { startLlamaServer, startOurs, type Server } from "./servers.js";
import { median } from "./stats.js";

const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "The weather in a city.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];
const KINDS = ["plain", "tools"] as const;
type Kind = (typeof KINDS)[number];

interface Timing {
  readonly firstMs: number;
  readonly totalMs: number;
  /** What came back: the text, or the calls as `name(arguments)`. */
  readonly reply: string;
}

interface Delta {
  content?: string | null;
  reasoning_content?: string;
  tool_calls?: { function?: { name?: string; arguments?: string } }[];
}

/** One streamed chat request: when its first delta came, when it ended, and what it said. */
async function streamChat(server: Server, model: string, kind: Kind): Promise<Timing> {
  const body = {
    model,
    messages: [{ role: "user", content: "Weather in Tokyo?" }],
    temperature: 0,
    stream: true,
    ...(kind === "tools" ? { tools: TOOLS } : {}),
  };
  const start = performance.now();
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok || response.body === null)
    throw new Error(`${server.name}: HTTP ${response.status} ${await response.text()}`);
  let [first, text, buffer] = [Number.NaN, "", ""];
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    const lines = (buffer + read.value).split("\n");
    buffer = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
      const delta = (JSON.parse(line.slice(6)) as { choices?: { delta?: Delta }[] }).choices?.[0]?.delta;
      const call = delta?.tool_calls?.[0]?.function;
      const piece = (delta?.content ?? "") + (call ? `${call.name ?? ""}${call.arguments ?? ""}` : "");
      if (piece !== "" && Number.isNaN(first)) first = performance.now() - start;
      text += piece;
    }
  }
  return { firstMs: first, totalMs: performance.now() - start, reply: text };
}

interface Measured {
  cold: Partial<Record<Kind, Timing>>;
  warm: Record<Kind, Timing[]>;
}

/** `requests` requests of each kind, kinds alternating, on one server. */
async function round(server: Server, model: string, requests: number, into: Measured): Promise<void> {
  for (let i = 0; i < requests; i++) {
    for (const kind of KINDS) {
      const timing = await streamChat(server, model, kind);
      if (into.cold[kind] === undefined) into.cold[kind] = timing;
      else into.warm[kind].push(timing);
    }
  }
}

const ms = (values: readonly number[]): string => (values.length === 0 ? "—" : median(values).toFixed(1));

/** The markdown table: each server's medians per kind, the tool path's cost, this server's ratio to llama-server's. */
function report(model: string, results: readonly [Server, Measured][]): string {
  const lines = [
    `tool path on the \`${model}\` twin (medians, ms; first request after start apart)`,
    "",
    "| server | kind | first delta | end | first request: first delta / end | reply |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const [server, m] of results) {
    for (const kind of KINDS) {
      const warm = m.warm[kind];
      const cold = m.cold[kind];
      const reply = JSON.stringify(warm[0]?.reply ?? cold?.reply ?? "").slice(0, 50);
      const first = `${cold?.firstMs.toFixed(1)} / ${cold?.totalMs.toFixed(1)}`;
      lines.push(
        `| ${server.name} | ${kind} | ${ms(warm.map((t) => t.firstMs))} | ${ms(warm.map((t) => t.totalMs))} | ` +
          `${first} | ${reply} |`,
      );
    }
    const cost = median(m.warm.tools.map((t) => t.totalMs)) - median(m.warm.plain.map((t) => t.totalMs));
    lines.push(`| ${server.name} | tools − plain (end) | | ${cost.toFixed(1)} | | |`);
  }
  const [ours, theirs] = results.map(([, m]) => m);
  if (ours !== undefined && theirs !== undefined) {
    for (const kind of KINDS) {
      const ratio = median(ours.warm[kind].map((t) => t.totalMs)) / median(theirs.warm[kind].map((t) => t.totalMs));
      lines.push(`| this server ÷ llama-server | ${kind} (end) | | ${ratio.toFixed(2)}× | | |`);
    }
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      model: { type: "string", default: "qwen3-coder" },
      rounds: { type: "string", default: "5" },
      requests: { type: "string", default: "6" },
    },
  });
  const model = values.model as FamilyTwin;
  if (!FAMILY_TWINS.includes(model)) throw new Error(`--model must be a family twin: ${FAMILY_TWINS.join(", ")}`);
  const modelPath = (await ensureModels("models", [model]))[model];
  const servers = [await startOurs(modelPath), await startLlamaServer(modelPath, ["--jinja"])];
  const measured = servers.map((): Measured => ({ cold: {}, warm: { plain: [], tools: [] } }));
  try {
    for (let r = 0; r < Number(values.rounds); r++) {
      // Servers take turns going first.
      const order = r % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) await round(servers[i] as Server, model, Number(values.requests), measured[i] as Measured);
      console.error(`bench:tools: round ${r + 1} of ${values.rounds}`);
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
  console.log(
    report(
      model,
      servers.map((s, i) => [s, measured[i] as Measured]),
    ),
  );
}

await main();
