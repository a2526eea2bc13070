// Fill-in-the-middle prompts on the real `qwen2.5-coder` twin loaded in process (gguf/twins/coder.ts):
// the FIM tokens read from its vocabulary (Qwen2.5-Coder's), the prompt's exact tokens in llama-server's
// repository-level layout, special-token text in the user's text kept as text, the order reversed for
// suffix-prefix-middle models, a model without FIM tokens refused with the detail the edge names its
// field from, and the line rules (n_indent, t_max_predict_ms) on generated text.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureModels, modelPath } from "../../gguf/models.js";
import { FillInMiddleUnsupportedSchema, InfillSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { infillTokens } from "../../sidecar/engine/chat/infill-prompt.js";
import { LineRuleGate } from "../../sidecar/engine/decode/line-rules.js";
import { loadModel, type LoadedModel, type ModelOptions } from "../../sidecar/engine/llama/model.js";
import { loadScripted } from "../support/engine.js";

/** The coder twin on one thread, one sequence, a 1,024-token context (a 512-token FIM window). */
const CODER_OPTIONS: ModelOptions = {
  modelPath: modelPath("qwen2.5-coder"),
  threads: 1,
  engine: "auto",
  sequences: 1,
  contextSize: 1024,
  maxQueue: 1,
  queueTimeoutMs: 10_000,
};
let coder: LoadedModel;
let plain: LoadedModel;
beforeAll(async () => {
  await ensureModels("models", ["qwen2.5-coder", "scripted"]);
  coder = await loadModel(CODER_OPTIONS);
  plain = await loadScripted({ sequences: 1, contextSize: 256 });
}, 120_000);
afterAll(async () => {
  await coder?.dispose();
  await plain?.dispose();
});

const text = (tokens: readonly number[]) => coder.model.detokenize(tokens as never, true);
const infill = (fields: MessageInitShape<typeof InfillSchema>) => create(InfillSchema, fields);

describe("fill-in-the-middle prompts", () => {
  it("finds Qwen2.5-Coder's six FIM tokens in the twin's vocabulary", () => {
    const fim = coder.fim;
    expect(fim?.order).toBe("prefix-suffix-middle");
    const names = [fim?.prefix, fim?.suffix, fim?.middle, fim?.pad, fim?.repo, fim?.fileSeparator].map((t) =>
      t === undefined ? "?" : text([t]),
    );
    expect(names).toEqual([
      "<|fim_prefix|>",
      "<|fim_suffix|>",
      "<|fim_middle|>",
      "<|fim_pad|>",
      "<|repo_name|>",
      "<|file_sep|>",
    ]);
  });

  it("lays out files, prefix, prompt, suffix and middle as llama-server's /infill does", () => {
    const tokens = infillTokens(
      coder,
      infill({
        prefix: "def add(a, b):\n",
        prompt: "    ",
        suffix: "\nprint(add(1, 2))\n",
        files: [
          { filename: "util.py", text: "X = 1\n" },
          { filename: "", text: "Y = 2\n" },
        ],
      }),
    );
    expect(text(tokens)).toBe(
      "<|repo_name|>myproject\n<|file_sep|>util.py\nX = 1\n<|file_sep|>tmp\nY = 2\n<|file_sep|>filename\n" +
        "<|fim_prefix|>def add(a, b):\n    <|fim_suffix|>\nprint(add(1, 2))\n<|fim_middle|>",
    );
  });

  it("keeps special-token text in the user's text as text", () => {
    const tokens = infillTokens(coder, infill({ prefix: "<|fim_pad|><|fim_middle|>", suffix: "<|endoftext|>" }));
    const fim = coder.fim;
    // Only the three FIM tokens the layout puts there are control tokens; the rest is text.
    const controls = tokens.filter((t) => coder.model.getTokenAttributes(t as never).control);
    expect(controls).toEqual([fim?.repo, fim?.fileSeparator, fim?.prefix, fim?.suffix, fim?.middle]);
    expect(text(tokens)).toContain("<|fim_prefix|><|fim_pad|><|fim_middle|><|fim_suffix|><|endoftext|><|fim_middle|>");
  });

  it("puts the suffix first for a model set to suffix-prefix-middle (a preset's fimOrder)", async () => {
    const spm = await loadModel({ ...CODER_OPTIONS, fimOrder: "suffix-prefix-middle" });
    const tokens = infillTokens(spm, infill({ prefix: "a", suffix: "b" }));
    await spm.dispose();
    expect(text(tokens)).toBe(
      "<|repo_name|>myproject\n<|file_sep|>filename\n<|fim_suffix|>b<|fim_prefix|>a<|fim_middle|>",
    );
  });

  it("keeps the prefix's end and the suffix's start when they are longer than the window", () => {
    // A 1024-token context: a 512-token window, 384 tokens of prefix, 128 less 2 of suffix.
    const tokens = infillTokens(coder, infill({ prefix: "x ".repeat(2000), suffix: "y ".repeat(2000) }));
    const fim = coder.fim;
    const pre = tokens.indexOf(fim?.prefix as never);
    const suf = tokens.indexOf(fim?.suffix as never);
    expect(suf - pre - 1).toBe(384);
    expect(tokens.length - 1 - suf - 1).toBe(126);
  });

  it("keeps the files' last tokens that fit, leaving a quarter window for the middle", () => {
    // A 1,024-token context: a 512-token window, the FIM tokens and 128 tokens for the middle leave 380.
    const files = [{ filename: "big.py", text: "z = 0\n".repeat(2000) }];
    const tokens = infillTokens(coder, infill({ prefix: "def f():\n", suffix: "\n", files }));
    const fim = coder.fim;
    const pre = tokens.indexOf(fim?.prefix as never);
    expect(pre).toBe(380);
    // The cut falls anywhere in the files: what is kept is their end, then the current file's marker.
    expect(text(tokens.slice(0, pre))).toMatch(/^[z =0\n]+<\|file_sep\|>filename\n$/);
    expect(tokens.length).toBeLessThanOrEqual(1024 - 128);
  });

  it("refuses a model without FIM tokens with INVALID_ARGUMENT and a FillInMiddleUnsupported detail", () => {
    let caught: unknown;
    try {
      infillTokens(plain, infill({ prefix: "a", suffix: "b" }));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConnectError);
    const error = caught as ConnectError;
    expect(error.code).toBe(Code.InvalidArgument);
    const [detail] = error.findDetails(FillInMiddleUnsupportedSchema);
    expect(detail?.model).toBe(plain.id);
    expect(detail?.missing).toEqual(["prefix", "suffix", "middle"]);
  });
});

describe("line rules", () => {
  it("n_indent: from the second line on, a line indented less ends the middle before its text", () => {
    const gate = new LineRuleGate({ minIndent: 4, timeLimitMs: 0 }, () => 0);
    expect(gate.push("x = 1")).toEqual({ text: "x = 1", ended: false });
    expect(gate.push("\n    y")).toEqual({ text: "\n    y", ended: false });
    expect(gate.push(" = 2\n  ")).toEqual({ text: " = 2\n  ", ended: false });
    expect(gate.push("z")).toEqual({ text: "", ended: true });
  });

  it("t_max_predict_ms: a token that completes a line after the limit ends the middle with it", () => {
    let first = performance.now();
    const gate = new LineRuleGate({ minIndent: 0, timeLimitMs: 1000 }, () => first);
    expect(gate.push("a\n")).toEqual({ text: "a\n", ended: false });
    first -= 2000;
    expect(gate.push("b")).toEqual({ text: "b", ended: false });
    expect(gate.push("c\nd")).toEqual({ text: "c\nd", ended: true });
  });
});
