// Reasoning items' encrypted_content: this server's own comes back as the text it was made from;
// another server's (or a damaged one) is not read.
import { describe, expect, it } from "vitest";
import {
  openReasoning,
  sealReasoning,
  wantsEncryptedReasoning,
} from "../../edge/protocols/openai-responses/encrypted-reasoning.js";

describe("encrypted reasoning", () => {
  it("opens what it sealed, any text", () => {
    for (const text of ["", "Checking the forecast.", "22°C ☀️ 🦙\n<think>\\u0000", "x".repeat(10_000)]) {
      const sealed = sealReasoning(text);
      expect(sealed).toMatch(/^llm-edge\.r1\.[A-Za-z0-9_-]*$/);
      expect(openReasoning(sealed)).toBe(text);
    }
  });

  it("does not read another server's content, nor a damaged one", () => {
    expect(openReasoning("gAAAAABo-encrypted-by-someone-else")).toBeUndefined();
    expect(openReasoning("llm-edge.r1.!!!")).toBeUndefined();
    // Bytes that are not UTF-8 (0xff) are refused, not turned into U+FFFD.
    expect(openReasoning("llm-edge.r1._w")).toBeUndefined();
  });

  it("is asked for by include", () => {
    expect(wantsEncryptedReasoning(["reasoning.encrypted_content"])).toBe(true);
    expect(wantsEncryptedReasoning(["message.output_text.logprobs"])).toBe(false);
    expect(wantsEncryptedReasoning(undefined)).toBe(false);
  });
});
