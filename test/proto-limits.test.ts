// The limits both sides check, as the proto documents them: one constant on each side (the edge
// and the sidecar never import each other), equal to each other and to the proto's comment.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  MAX_STOP_SEQUENCES as EDGE_MAX_STOPS,
  MAX_TOP_LOGPROBS as EDGE_MAX_TOP_LOGPROBS,
} from "../edge/fields/checks.js";
import { TOOL_NAME as EDGE_TOOL_NAME } from "../edge/fields/tool-checks.js";
import { TOOL_NAME as SIDECAR_TOOL_NAME } from "../sidecar/engine/chat/prompt.js";
import {
  MAX_STOP_LENGTH,
  MAX_STOP_SEQUENCES as SIDECAR_MAX_STOPS,
  MAX_TOP_LOGPROBS as SIDECAR_MAX_TOP_LOGPROBS,
} from "../sidecar/engine/decode/sampling.js";
import { MAX_TOOLS } from "../sidecar/engine/grammar/schema-limits.js";

const proto = readFileSync(new URL("../proto/inference/v1/inference.proto", import.meta.url), "utf8");

/** The comment lines right above the field declared by `declaration`, joined. */
function commentOf(declaration: string): string {
  const lines = proto.split("\n");
  const at = lines.findIndex((line) => line.trim() === declaration);
  expect(
    lines.filter((line) => line.trim() === declaration),
    declaration,
  ).toHaveLength(1);
  const comment: string[] = [];
  for (let i = at - 1; i >= 0 && lines[i]?.trim().startsWith("//"); i--)
    comment.unshift(lines[i]!.trim().replace(/^\/\/\s?/, ""));
  return comment.join(" ");
}

const number = (text: string, pattern: RegExp): number => Number(pattern.exec(text)?.[1]);

describe("limits shared by the edge and the sidecar", () => {
  it("stop sequences: count and length", () => {
    const comment = commentOf("repeated string stop = 6;");
    const most = number(comment, /Up to (\d+) stop sequences/);
    expect(most).toBe(16);
    expect(EDGE_MAX_STOPS).toBe(most);
    expect(SIDECAR_MAX_STOPS).toBe(most);
    expect(number(comment, /each 1 to (\d+) characters/)).toBe(MAX_STOP_LENGTH);
  });

  it("top_logprobs", () => {
    const most = number(commentOf("uint32 top_logprobs = 8;"), /\(0\.\.(\d+)\)/);
    expect(most).toBe(20);
    expect(EDGE_MAX_TOP_LOGPROBS).toBe(most);
    expect(SIDECAR_MAX_TOP_LOGPROBS).toBe(most);
  });

  it("tool names: the same pattern", () => {
    const pattern = /\(`(\^[^`]+\$)`\)/.exec(commentOf("string name = 1;"))?.[1];
    expect(pattern).toBe("^[A-Za-z0-9_-]{1,64}$");
    expect(EDGE_TOOL_NAME.source).toBe(pattern);
    expect(SIDECAR_TOOL_NAME.source).toBe(pattern);
  });

  it("tools per request (checked by the sidecar)", () => {
    expect(number(commentOf("repeated Tool tools = 2;"), /\(at most (\d+)\)/)).toBe(MAX_TOOLS);
  });
});
