// edge/ runs in workerd: Web APIs only. Only edge/hosts/node/ (the Node host) may import Node
// modules, and only edge/hosts/worker/main.ts workerd's. Inside edge/, each folder imports only the folders below it
// (the rules its
// README states, edge/README.md "Layers"). Import cycles anywhere are refused by `npm run lint`
// (Biome's noImportCycles, type-only imports included).
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { imports, sources } from "../support/imports.js";

const edgeDir = fileURLToPath(new URL("../../edge", import.meta.url));
const FORBIDDEN = [
  /^node:/,
  /^@grpc\//,
  /^node-llama-cpp/,
  /^@hono\/node-server/,
  /^better-sqlite3/,
  /^ws$/,
  /^(fs|path|http|https|net|stream|os|crypto|buffer|process|url|child_process|events|util)$/,
];

describe("edge/ imports", () => {
  const files = sources(edgeDir);

  it("finds the edge sources", () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files.map((f) => [relative(edgeDir, f), f]))("%s imports no Node-only module", (name, file) => {
    const found = imports(readFileSync(file, "utf8"));
    const bad = found.filter((spec) => FORBIDDEN.some((pattern) => pattern.test(spec)));
    const nodeHost = name.startsWith("hosts/node/");
    if (name === "hosts/node/main.ts") expect(bad.length).toBeGreaterThan(0);
    else if (!nodeHost) expect(bad).toEqual([]);
    // workerd's own modules: only the Worker's entry (Node cannot load them)
    if (name !== "hosts/worker/main.ts") expect(found.filter((spec) => spec.startsWith("cloudflare:"))).toEqual([]);
    // no Buffer or process globals either
    if (!nodeHost) expect(readFileSync(file, "utf8")).not.toMatch(/\b(Buffer|process)\./);
    // OpenTelemetry: its API in trace/ alone; its SDK and exporters in the hosts (docs/decisions.md, "Traces").
    const otel = found.filter((spec) => spec.startsWith("@opentelemetry/"));
    if (name.startsWith("hosts/")) return;
    expect(otel).toEqual(name.startsWith("trace/") ? otel.filter((spec) => spec === "@opentelemetry/api") : []);
  });
});

// Lower layers never import higher ones: production code (edge/, sidecar/, gguf/, proto/gen/)
// never reaches into scripts/, bench/ or test/; gguf/ imports nothing of the project but itself;
// edge/ and sidecar/ never import each other.
describe("layering", () => {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const rules: ReadonlyArray<readonly [string, readonly string[]]> = [
    ["edge", ["scripts", "bench", "test", "sidecar", "gguf"]],
    ["sidecar", ["scripts", "bench", "test", "edge"]],
    ["gguf", ["scripts", "bench", "test", "edge", "sidecar", "proto"]],
  ];
  const cases = rules.flatMap(([folder, forbidden]) =>
    sources(join(root, folder)).map((file) => [relative(root, file), file, forbidden] as const),
  );

  it.each(cases)("%s imports no higher layer", (_name, file, forbidden) => {
    const reached = imports(readFileSync(file, "utf8"))
      .filter((spec) => spec.startsWith("."))
      .map((spec) => relative(root, join(file, "..", spec)).split(/[\\/]/)[0] ?? "");
    expect(reached.filter((top) => forbidden.includes(top))).toEqual([]);
  });
});

// Which edge/ folders each folder may import besides its own files (edge/README.md, "Layers"; each
// folder's README says the same). The hosts (hosts/node/, hosts/worker/) may import any of them.
const LAYERS: Readonly<Record<string, readonly string[]>> = {
  http: ["state", "replay", "protocols", "core", "access", "upstream", "base", "fields", "sse", "trace"],
  state: ["state/c1", "state/responses", "state/openai-conversations", "state/threads", "state/batches", "state/store"],
  "state/batches": ["core", "access", "base", "state/store", "state/items"],
  "state/c1": ["protocols", "core", "access", "upstream", "base", "sse", "state/store"],
  "state/threads": ["protocols", "core", "access", "upstream", "base", "sse", "state/store"],
  "state/responses": [
    "protocols",
    "core",
    "access",
    "upstream",
    "base",
    "sse",
    "state/store",
    "state/items",
    "state/openai-conversations",
  ],
  "state/openai-conversations": [
    "protocols",
    "core",
    "access",
    "upstream",
    "base",
    "sse",
    "state/store",
    "state/items",
  ],
  "state/items": ["base"],
  "state/store": [],
  replay: ["protocols", "core", "access", "upstream", "base", "sse"],
  "protocols/openai-common": ["core", "upstream", "base", "fields", "sse"],
  protocols: ["core", "upstream", "base", "fields", "sse", "protocols/openai-common"],
  core: ["access", "upstream", "base", "sse", "trace"],
  access: ["base"],
  upstream: ["base"],
  base: [],
  fields: [],
  config: [],
  sse: [],
  trace: [],
};

/**
 * The folder whose rules a file of edge/ follows: `hosts`, `state/<feature>`, `protocols/<name>`, or its top folder.
 */
function unitOf(name: string): string {
  const parts = name.split(/[\\/]/);
  if (parts[0] === "hosts") return "hosts";
  if ((parts[0] === "state" || parts[0] === "protocols") && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  return parts[0] ?? "";
}

const rulesOf = (unit: string): readonly string[] | undefined =>
  LAYERS[unit] ?? (unit.startsWith("protocols/") ? LAYERS["protocols"] : undefined);
const within = (unit: string, folder: string): boolean => unit === folder || unit.startsWith(`${folder}/`);

/** The edge/ files a file imports, by their path under edge/ (`.ts`). */
function edgeImports(file: string): string[] {
  return imports(readFileSync(file, "utf8"))
    .filter((spec) => spec.startsWith("."))
    .map((spec) => relative(edgeDir, resolve(dirname(file), spec)).replace(/\.js$/, ".ts"))
    .filter((name) => !name.startsWith(".."));
}

describe("edge/ layers", () => {
  const files = sources(edgeDir).map((f) => [relative(edgeDir, f), f] as const);

  it.each(files)("%s imports only the folders below its own", (name, file) => {
    const unit = unitOf(name);
    if (unit === "hosts") return;
    const allowed = rulesOf(unit);
    expect(allowed, `no rule for ${unit}/ in LAYERS`).toBeDefined();
    const reached = edgeImports(file)
      .map(unitOf)
      .filter((target) => target !== unit);
    expect(reached.filter((target) => !(allowed ?? []).some((folder) => within(target, folder)))).toEqual([]);
  });
});

// One folder per host, the same file names for the same jobs, so a diff of the two shows only
// real differences (edge/hosts/README.md); neither host imports the other.
describe("edge/hosts/", () => {
  const JOBS = ["main.ts", "server.ts", "env.ts", "sockets.ts", "tracing.ts", "store.ts", "files.ts", "queue.ts"];
  const names = (host: string) =>
    sources(join(edgeDir, "hosts", host)).map((file) => relative(join(edgeDir, "hosts", host), file));

  it.each(["node", "worker"])("hosts/%s/ has a file for each job", (host) => {
    expect(JOBS.filter((job) => !names(host).includes(job))).toEqual([]);
  });

  it.each([
    ["node", "worker"],
    ["worker", "node"],
  ])("hosts/%s/ imports nothing of hosts/%s/", (host, other) => {
    for (const file of sources(join(edgeDir, "hosts", host)))
      expect(
        edgeImports(file).filter((name) => name.startsWith(`hosts/${other}/`)),
        file,
      ).toEqual([]);
  });
});
