// Each protocol's request-field table (edge/fields/field-table.ts; docs/contract.md, "Request
// fields", is written from it) as tests, so that no field that changes a request's meaning is
// dropped in silence: every field the official SDKs type is in the table, a refused field's sample
// is refused with a 400 naming it, and an ignored field's sample changes nothing the sidecar is sent.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fieldDocs, type Fate } from "../../edge/fields/field-table.js";
import { FIELD_TABLES } from "../../scripts/field-docs.js";
import { post, testApp } from "../support/app.js";

/** A protocol's rows, from its field table (edge/fields/field-table.ts; docs/contract.md is written from the same). */
function table(name: string): { readonly field: string; readonly fate: Fate; readonly sample: unknown }[] {
  const rows = FIELD_TABLES[name];
  if (rows === undefined) throw new Error(`no field table ${name}`);
  return fieldDocs(rows).map(({ name: field, fate, doc }) => ({ field, fate, sample: doc.sample }));
}

/** The properties of an SDK's request type, read from its declarations. */
function sdkFields(file: string, name: string): string[] {
  const text = readFileSync(new URL(`../../node_modules/${file}`, import.meta.url), "utf8");
  const start = text.search(new RegExp(`^(export )?interface ${name} \\{`, "m"));
  if (start === -1) throw new Error(`${name} not found in ${file}`);
  const fields: string[] = [];
  for (const line of text.slice(start).split("\n").slice(1)) {
    if (line.startsWith("}")) break;
    const field = /^ {4}(\w+)\??:/.exec(line)?.[1];
    if (field !== undefined) fields.push(field);
  }
  return fields;
}

const PROTOCOLS = [
  {
    name: "chat",
    path: "/v1/chat/completions",
    base: { model: "m", messages: [{ role: "user", content: "hi" }] },
    sdk: ["openai/resources/chat/completions/completions.d.ts", "ChatCompletionCreateParamsBase"],
  },
  {
    name: "completions",
    path: "/v1/completions",
    base: { model: "m", prompt: "hi" },
    sdk: ["openai/resources/completions.d.ts", "CompletionCreateParamsBase"],
  },
  {
    name: "infill",
    path: "/infill",
    base: { model: "m", input_prefix: "def f():\n", input_suffix: "\n" },
    // llama-server's: no SDK types it (llama.vscode's body is in test/e2e/infill.test.ts).
    sdk: undefined,
  },
  {
    name: "responses",
    path: "/v1/responses",
    base: { model: "m", input: "hi" },
    sdk: ["openai/resources/responses/responses.d.ts", "ResponseCreateParamsBase"],
  },
  {
    name: "messages",
    path: "/v1/messages",
    base: { model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] },
    sdk: ["@anthropic-ai/sdk/resources/messages/messages.d.ts", "MessageCreateParamsBase"],
  },
  {
    name: "ollama-chat",
    path: "/api/chat",
    base: { model: "m", messages: [{ role: "user", content: "hi" }], stream: false },
    sdk: ["ollama/dist/browser.d.ts", "ChatRequest"],
  },
  {
    name: "ollama-generate",
    path: "/api/generate",
    base: { model: "m", prompt: "hi", stream: false },
    sdk: ["ollama/dist/browser.d.ts", "GenerateRequest"],
  },
  {
    name: "ollama-options",
    path: "/api/chat",
    base: { model: "m", messages: [{ role: "user", content: "hi" }], stream: false },
    sdk: ["ollama/dist/browser.d.ts", "Options"],
    // Its fields go in `options`.
    nest: "options",
  },
] as const;

/** A body with `field` set to `sample`, at the top or in the object `nest` names. */
function withField(base: object, field: string, sample: unknown, nest?: string): object {
  return nest === undefined ? { ...base, [field]: sample } : { ...base, [nest]: { [field]: sample } };
}

describe.each(PROTOCOLS)("request fields of $name", (protocol) => {
  const { name, path, base, sdk } = protocol;
  const nest = "nest" in protocol ? protocol.nest : undefined;
  const rows = table(name);

  it.skipIf(sdk === undefined)("list every field the official SDK types, each once", () => {
    if (sdk === undefined) return;
    const listed = rows.map((row) => row.field);
    const missing = sdkFields(sdk[0], sdk[1]).filter((field) => !listed.includes(field));
    expect(missing, "fields the SDK sends with no row in the protocol's field table").toEqual([]);
  });

  const refused = rows.filter((row) => row.fate === "refused").map((row) => [row.field, row.sample] as const);
  if (refused.length > 0) {
    it.each(refused)("refuses %s with a 400 naming it, before the sidecar", async (field, sample) => {
      const { app, sidecar } = testApp();
      const response = await post(app, path, withField(base, field, sample, nest));
      expect(response.status).toBe(400);
      expect(await response.text()).toContain(field);
      expect(sidecar.calls).toHaveLength(0);
    });
  }

  const ignored = rows.filter((row) => row.fate === "ignored").map((row) => [row.field, row.sample] as const);
  it.each(ignored)("ignores %s: the sidecar is sent the same request", async (field, sample) => {
    const { app, sidecar } = testApp();
    expect((await post(app, path, base)).status).toBe(200);
    const plain = sidecar.lastCall?.request;
    const response = await post(app, path, withField(base, field, sample, nest));
    expect(response.status, await response.text()).toBe(200);
    expect(sidecar.lastCall?.request).toEqual(plain);
  });
});

describe("the field tables", () => {
  it.each(Object.entries(FIELD_TABLES))(
    "%s: every refused and ignored row has a sample, every implemented row none",
    (_name, rows) => {
      for (const { name, fate, doc } of fieldDocs(rows)) {
        expect(doc.sample === undefined, name).toBe(fate === "implemented");
        expect(doc.why, name).not.toBe("");
      }
    },
  );
});
