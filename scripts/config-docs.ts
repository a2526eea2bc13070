/**
 * `npm run docs:config`: writes docs/configuration.md from the two settings tables, the sidecar's
 * (sidecar/config.ts) and the edge's (edge/config/settings.ts), with the few words around them
 * written here. test/config-docs.test.ts fails when the file differs from what this writes.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  NODE_SETTINGS,
  SHARED_SETTINGS,
  WORKER_BINDINGS,
  WORKER_SETTINGS,
  type Setting,
} from "../edge/config/settings.js";
import { SIDECAR_OPTIONS } from "../sidecar/config.js";
import { ACCESS_VARS, ROOT, SECRET_VARS } from "./wrangler-dev.js";

export const CONFIGURATION_MD = join(ROOT, "docs", "configuration.md");

const cell = (text: string): string => text.replace(/\|/g, "\\|");
const code = (text: string): string => `\`${text}\``;
/** The sidecar's help is plain text: `<token>` must not read as an HTML tag. */
const plain = (text: string): string => text.replace(/</g, "&lt;").replace(/>/g, "&gt;");
const list = (names: readonly string[]): string => names.map(code).join(", ");

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.map(cell).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

function sidecarSection(): string {
  const rows = Object.entries(SIDECAR_OPTIONS).map(([flag, o]) => [
    code(`--${flag}`),
    code(o.env),
    o.default === undefined ? "none" : code(o.default),
    plain(o.help),
  ]);
  return `## Sidecar

\`npm run sidecar\`, or the first half of \`npm start\`. Each setting is a flag or an environment
variable; a flag wins over its variable, which wins over the default (an empty variable counts as
unset). \`npm start -- --flag value\` passes flags on to the sidecar; \`npm run sidecar -- --help\`
lists them. A bad value stops the start with a line naming the flag.

${table(["flag", "variable", "default", "meaning"], rows)}

Traces take OpenTelemetry's standard variables, with no flags: \`OTEL_EXPORTER_OTLP_ENDPOINT\` or
\`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT\` turns them on, \`OTEL_EXPORTER_OTLP_PROTOCOL\` is \`http/protobuf\`
(default) or \`http/json\`, \`OTEL_SERVICE_NAME\` defaults to \`llm-sidecar\`
([decisions](decisions.md#traces)).
`;
}

const HOSTS = { both: "both", node: "Node", worker: "Workers" } as const;

function edgeRows(settings: Readonly<Record<string, Setting>>, hosts: keyof typeof HOSTS): string[][] {
  return Object.values(settings).map((s) => [
    code(s.env),
    HOSTS[hosts],
    s.kind.type,
    s.shown ?? (s.default === undefined ? "none" : code(String(s.default))),
    s.help,
  ]);
}

function edgeSection(): string {
  const rows = [
    ...edgeRows(SHARED_SETTINGS, "both"),
    ...edgeRows(NODE_SETTINGS, "node"),
    ...edgeRows(WORKER_SETTINGS, "worker"),
  ];
  const bindings = WORKER_BINDINGS.map((b) => [code(b.env), b.type, b.where, b.help]);
  return `## Edge

The edge reads the same settings on both hosts, through one parser (\`edge/config/\`); "read by"
says which host reads each.

- **Node** (\`npm run edge\`, or \`EDGE_RUNTIME=node npm start\`): environment variables.
- **Workers** (\`wrangler dev\`, \`npm start\`, a deployment): \`[vars]\` in \`wrangler.toml\`,
  \`--var NAME:value\` on \`wrangler dev\`'s command line, secrets with \`wrangler secret put NAME\`
  (${list(SECRET_VARS)} are secrets), or a \`.dev.vars\` file beside \`wrangler.toml\` locally.
  \`npm start\` hands ${list(ACCESS_VARS)} from its environment to \`wrangler dev\`, the secrets
  through a private \`.dev.vars\`, never the command line.

An empty value counts as unset. A bad value stops the start with one line naming each bad variable
and what it accepts (e.g. \`RATE_LIMIT: "6O" is not a non-negative integer\`; secrets and URLs are
never repeated): \`npm run edge\` exits non-zero, and the Worker throws while it loads, so
\`wrangler dev\` stops ([why](decisions.md#settings-checked-before-the-edge-starts)).

${table(["variable", "read by", "accepts", "default", "meaning"], rows)}

The Worker's bindings, in \`wrangler.toml\`:

${table(["binding", "kind", "in wrangler.toml", "meaning"], bindings)}
`;
}

const START = `## npm start

\`npm start\` runs the sidecar, then the edge on \`EDGE_HOST\`:\`EDGE_PORT\` (it passes them and
\`SIDECAR_URL\` on). It also reads \`EDGE_RUNTIME\` (\`node\`: the edge on Node, in the sidecar's process, calling
it in memory while its port stays open to direct callers; else \`wrangler dev\`) and \`INSPECTOR_PORT\`
(\`wrangler dev\`'s DevTools port; default \`EDGE_PORT\` + 1149, so instances on distinct ports never share one).
`;

/** docs/configuration.md as it should be. */
export function configurationDocs(): string {
  const intro = `# Configuration

<!-- Written by \`npm run docs:config\` (scripts/config-docs.ts) from sidecar/config.ts and
edge/config/settings.ts: edit those, not this file. -->

Two processes, each with its own settings: the sidecar (llama.cpp behind gRPC) and the edge (the
HTTP API, on Node or as a Cloudflare Worker).
`;
  return [intro, sidecarSection(), edgeSection(), START].join("\n");
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  writeFileSync(CONFIGURATION_MD, configurationDocs());
  console.error(`wrote ${CONFIGURATION_MD}`);
}
