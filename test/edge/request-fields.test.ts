// The request-field tables of docs/contract.md ("Request fields") as tests, so that no field that
// changes a request's meaning is dropped in silence: every field the official SDKs type is in the
// table, a refused field's sample is refused with a 400 naming it, and an ignored field's sample
// changes nothing the sidecar is sent.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { post, testApp } from "../support/app.js";

interface Row {
  readonly fields: string[];
  readonly decision: "implemented" | "ignored" | "refused";
  readonly sample: unknown;
}

const contract = readFileSync(new URL("../../docs/contract.md", import.meta.url), "utf8");

/** The table after `<!-- fields: name -->`. */
function table(name: string): Row[] {
  const start = contract.indexOf(`<!-- fields: ${name} -->`);
  if (start === -1) throw new Error(`no field table ${name}`);
  const lines = contract.slice(start).split("\n").slice(1);
  const rows: Row[] = [];
  for (const line of lines.slice(2)) {
    if (!line.startsWith("|")) break;
    const [fields = "", decision = "", sample = ""] = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    rows.push({
      fields: [...fields.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ""),
      decision: decision as Row["decision"],
      sample: sample.startsWith("`") ? (JSON.parse(sample.slice(1, -1)) as unknown) : undefined,
    });
  }
  return rows;
}

/** The properties of an SDK's request type, read from its declarations. */
function sdkFields(file: string, name: string): string[] {
  const text = readFileSync(new URL(`../../node_modules/${file}`, import.meta.url), "utf8");
  const start = text.indexOf(`export interface ${name} {`);
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
] as const;

describe.each(PROTOCOLS)("request fields of $name", ({ name, path, base, sdk }) => {
  const rows = table(name);

  it("list every field the official SDK types, each once", () => {
    const listed = rows.flatMap((row) => row.fields);
    expect(new Set(listed).size).toBe(listed.length);
    const missing = sdkFields(sdk[0], sdk[1]).filter((field) => !listed.includes(field));
    expect(missing, "fields the SDK sends with no decision in docs/contract.md").toEqual([]);
  });

  const refused = rows.filter((row) => row.decision === "refused").map((row) => [row.fields[0] ?? "", row.sample] as const);
  if (refused.length > 0) {
    it.each(refused)("refuses %s with a 400 naming it, before the sidecar", async (field, sample) => {
      const { app, sidecar } = testApp();
      const response = await post(app, path, { ...base, [field]: sample });
      expect(response.status).toBe(400);
      expect(await response.text()).toContain(field);
      expect(sidecar.calls).toHaveLength(0);
    });
  }

  const ignored = rows.filter((row) => row.decision === "ignored").map((row) => [row.fields[0] ?? "", row.sample] as const);
  it.each(ignored)("ignores %s: the sidecar is sent the same request", async (field, sample) => {
    const { app, sidecar } = testApp();
    expect((await post(app, path, base)).status).toBe(200);
    const plain = sidecar.lastCall?.request;
    const response = await post(app, path, { ...base, [field]: sample });
    expect(response.status, await response.text()).toBe(200);
    expect(sidecar.lastCall?.request).toEqual(plain);
  });
});
