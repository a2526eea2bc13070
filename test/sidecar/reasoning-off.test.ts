// Reasoning off means none (docs/contract.md, "Reasoning effort"): a chat with a reasoning budget
// of 0, over real gRPC, on the `thinking` model (Qwen3's `enable_thinking` switch in its template:
// switched off, the prompt closes the segment and the model writes none) and the `tools` model
// (no switch: the model opens its segment and the sidecar closes it at once; those forced markers
// are no reasoning). Token counts are exact: both models' replies are scripted (gguf/models.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureModels, TOOLS_THINK_PIECES } from "../../gguf/models.js";
import { Role, type GenerateResponse } from "../../proto/gen/inference/v1/inference_pb.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startCatalogue } from "../support/catalogue.js";
import { THINK_REASONING, TOOLS_ANSWER } from "../support/scripted.js";
import { clientsFor, collect } from "../support/sidecar.js";

let sidecar: RunningSidecar;
beforeAll(async () => {
  await ensureModels("models", ["thinking"]);
  sidecar = await startCatalogue(["tools", "thinking"], { contextSize: 512 });
}, 120_000);
afterAll(async () => {
  await sidecar?.stop();
});

const hello = { messages: [{ role: Role.USER, content: "Hello!" }] };
/** `It is sunny in Tokyo, 22°C. ☀️`: 8 tokens, then "°" in 2 byte tokens and "☀️" in 6. */
const ANSWER_TOKENS = 16;
/** `<think>` through `</think>`, and the blank line after it. */
const THINK_TOKENS = TOOLS_THINK_PIECES.indexOf("</think>") + 1;
const BLANK_LINE = 2;

async function generate(model: string, reasoningBudget?: number): Promise<GenerateResponse["event"][]> {
  const chat = reasoningBudget === undefined ? hello : { ...hello, reasoningBudget };
  return collect(
    clientsFor(sidecar.url).grpc.generate({
      model,
      input: { case: "chat", value: chat },
      sampling: { temperature: 0 },
      maxTokens: 64,
    }),
  );
}

interface Reply {
  /** The reply as generated, markers included: the token events' bytes. */
  readonly raw: string;
  readonly text: string;
  readonly reasoning: string;
  readonly completion: number;
  readonly reasoningTokens: number;
}

function reply(events: GenerateResponse["event"][]): Reply {
  const pieces = events.flatMap((e) => (e.case === "token" ? [e.value.piece] : []));
  const parts = events.flatMap((e) => (e.case === "token" || e.case === "finish" ? [e.value] : []));
  const finish = events.at(-1);
  if (finish?.case !== "finish") throw new Error("no finish event");
  return {
    raw: Buffer.concat(pieces).toString("utf8"),
    text: parts.map((p) => p.text).join(""),
    reasoning: parts.map((p) => p.reasoning).join(""),
    completion: finish.value.completionTokens,
    reasoningTokens: finish.value.reasoningTokens,
  };
}

/** The prompt a chat renders to, as text: its tokens' bytes (Tokenize with pieces; control tokens as their text). */
async function promptText(model: string, reasoningBudget?: number): Promise<string> {
  const chat = reasoningBudget === undefined ? hello : { ...hello, reasoningBudget };
  const { pieces } = await clientsFor(sidecar.url).grpc.tokenize({
    model,
    input: { case: "chat", value: chat },
    withPieces: true,
  });
  return Buffer.concat(pieces).toString("utf8");
}

describe("a template with its own thinking switch (the thinking model)", () => {
  it(
    "budget 0 renders the switch off: the prompt closes the segment, the model writes no reasoning at " + "all",
    async () => {
      expect(await promptText("thinking", 0)).toBe(
        "<s><|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
      );
      expect(reply(await generate("thinking", 0))).toEqual({
        raw: TOOLS_ANSWER,
        text: TOOLS_ANSWER,
        reasoning: "",
        completion: ANSWER_TOKENS,
        reasoningTokens: 0,
      });
    },
  );

  it("any other budget leaves the switch on: the prompt and reply of a request without one", async () => {
    expect(await promptText("thinking", 512)).toBe("<s><|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n");
    expect(await promptText("thinking")).toBe("<s><|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n");
    expect(reply(await generate("thinking", 512))).toEqual({
      raw: `<think>\n${THINK_REASONING}\n</think>\n\n${TOOLS_ANSWER}`,
      text: TOOLS_ANSWER,
      reasoning: THINK_REASONING,
      completion: THINK_TOKENS + BLANK_LINE + ANSWER_TOKENS,
      reasoningTokens: THINK_TOKENS,
    });
  });
});

describe("a template without one (the tools model)", () => {
  it("budget 0: the segment the model opens is closed at once; its markers are no reasoning", async () => {
    expect(await promptText("tools", 0)).toBe("<s><|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n");
    // `<think>` sampled, `\n</think>` forced, then the blank line and the answer.
    expect(reply(await generate("tools", 0))).toEqual({
      raw: `<think>\n</think>\n\n${TOOLS_ANSWER}`,
      text: TOOLS_ANSWER,
      reasoning: "",
      completion: 3 + BLANK_LINE + ANSWER_TOKENS,
      reasoningTokens: 0,
    });
  });

  it("a budget spent mid-reasoning counts what the model wrote, not the end marker forced after it", async () => {
    // `<think>`, "\n", "Checking": the budget of 3; then `\n</think>` forced, and the answer.
    expect(reply(await generate("tools", 3))).toEqual({
      raw: `<think>\nChecking\n</think>\n\n${TOOLS_ANSWER}`,
      text: TOOLS_ANSWER,
      reasoning: "Checking",
      completion: 3 + 2 + BLANK_LINE + ANSWER_TOKENS,
      reasoningTokens: 3,
    });
  });
});
