// Each protocol's finish mapping (edge/protocols/*/finish.ts): every proto FinishReason, exactly.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { FinishReason, FinishSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { anthropicFinish } from "../../edge/protocols/anthropic-messages/finish.js";
import { openAiFinish } from "../../edge/protocols/openai-common/finish.js";
import { responsesFinish } from "../../edge/protocols/openai-responses/finish.js";

const finish = (reason: FinishReason, stopSequence = "") =>
  create(FinishSchema, { reason, stopSequence, completionTokens: 3 });
const incomplete = { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
const completed = { status: "completed", incomplete_details: null };

describe("finish mappings", () => {
  it.each([
    [FinishReason.STOP, "stop", "tool_calls", { stop_reason: "end_turn", stop_sequence: null }, completed],
    [FinishReason.LENGTH, "length", "length", { stop_reason: "max_tokens", stop_sequence: null }, incomplete],
    [
      FinishReason.CONTEXT_FULL,
      "length",
      "length",
      { stop_reason: "model_context_window_exceeded", stop_sequence: null },
      incomplete,
    ],
    [FinishReason.TOOL_CALLS, "stop", "tool_calls", { stop_reason: "tool_use", stop_sequence: null }, completed],
    [FinishReason.ABORT, null, null, null, null],
  ] as const)("reason %s", (reason, openAi, openAiCalled, anthropic, responses) => {
    expect(openAiFinish(reason)).toBe(openAi);
    expect(openAiFinish(reason, true)).toBe(openAiCalled);
    expect(anthropicFinish(finish(reason), true)).toEqual(anthropic);
    expect(responsesFinish(finish(reason))).toEqual(responses);
  });

  it("a stop sequence is named by Anthropic", () => {
    expect(anthropicFinish(finish(FinishReason.STOP, "Tokyo"))).toEqual({
      stop_reason: "stop_sequence",
      stop_sequence: "Tokyo",
    });
  });
});
