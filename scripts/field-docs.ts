/**
 * `npm run docs:fields`: writes each protocol's request-field table in docs/contract.md (after its
 * `<!-- fields: name -->` marker) from the protocol's field table (edge/fields/field-table.ts), the
 * same rows its request schema and its mapping are built from. test/field-docs.test.ts fails when
 * a table differs from what this writes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { fieldDocs, type FieldTable } from "../edge/fields/field-table.js";
import { MESSAGES_FIELDS } from "../edge/protocols/anthropic-messages/schema.js";
import { CHAT_FIELDS } from "../edge/protocols/openai-chat/schema.js";
import { COMPLETION_FIELDS } from "../edge/protocols/openai-completions/schema.js";
import { INFILL_FIELDS } from "../edge/protocols/llama-infill/schema.js";
import { RESPONSES_FIELDS } from "../edge/protocols/openai-responses/schema.js";
import { OLLAMA_OPTION_FIELDS } from "../edge/protocols/ollama/options.js";
import { OLLAMA_CHAT_FIELDS, OLLAMA_GENERATE_FIELDS } from "../edge/protocols/ollama/schema.js";
import { ROOT } from "./wrangler-dev.js";

export const CONTRACT_MD = join(ROOT, "docs", "contract.md");

/** Each table by the name of its marker. */
export const FIELD_TABLES: Readonly<Record<string, FieldTable>> = {
  chat: CHAT_FIELDS,
  completions: COMPLETION_FIELDS,
  infill: INFILL_FIELDS,
  responses: RESPONSES_FIELDS,
  messages: MESSAGES_FIELDS,
  "ollama-chat": OLLAMA_CHAT_FIELDS,
  "ollama-generate": OLLAMA_GENERATE_FIELDS,
  "ollama-options": OLLAMA_OPTION_FIELDS,
};

const cell = (text: string | undefined): string => (text ?? "").replace(/\|/g, "\\|");

/** One table as markdown: a row per field, in the table's order. */
export function fieldTable(table: FieldTable): string {
  const rows = fieldDocs(table).map(({ name, fate, doc }) => {
    const sample = doc.sample === undefined ? "" : `\`${JSON.stringify(doc.sample)}\``;
    return (
      `| \`${name}\` | ${fate} | ${cell(doc.proto)} | ${cell(doc.absent)} | ${cell(doc.limits)} | ` +
      `${cell(sample)} | ${cell(doc.why)} |`
    );
  });
  return [
    "| field | fate | proto | when absent | limits | sample | why |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

/** The document's text with every marked table written anew; throws when a marker is missing. */
export function withFieldTables(text: string): string {
  let out = text;
  for (const [name, table] of Object.entries(FIELD_TABLES)) {
    const marker = `<!-- fields: ${name} -->\n`;
    const start = out.indexOf(marker);
    if (start < 0) throw new Error(`docs/contract.md: no ${marker.trim()}`);
    const from = start + marker.length;
    const lines = out.slice(from).split("\n");
    const count = lines.findIndex((line) => !line.startsWith("|"));
    const end = from + lines.slice(0, count).join("\n").length;
    out = out.slice(0, from) + fieldTable(table) + out.slice(end);
  }
  return out;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  writeFileSync(CONTRACT_MD, withFieldTables(readFileSync(CONTRACT_MD, "utf8")));
  console.error("wrote the request-field tables of docs/contract.md");
}
