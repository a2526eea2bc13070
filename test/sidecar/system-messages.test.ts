// System messages later in a chat (Claude Code sends its environment that way): rendered where
// they stand when the template can, otherwise merged, in order, into the system prompt.
import type { ChatHistoryItem, ChatWrapper } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import { rendersSystemInPlace, systemFirst } from "../../sidecar/engine/chat/prompt.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, startTestSidecar } from "../support/sidecar.js";

describe("system messages inside a chat", () => {
  let sidecar: RunningSidecar;
  beforeAll(async () => {
    sidecar = await startTestSidecar({ model: modelPath("scripted") });
  });
  afterAll(async () => {
    await sidecar.stop();
  });

  it("stand where they are with a template that renders them (ChatML)", async () => {
    const [loaded] = sidecar.models;
    expect(rendersSystemInPlace(loaded!.chatWrapper)).toBe(true);
    const client = clientsFor(sidecar.url).grpc;
    const { tokens } = await client.tokenize({
      input: {
        case: "chat",
        value: {
          messages: [
            { role: Role.SYSTEM, content: "Be brief." },
            { role: Role.USER, content: "Hi" },
            { role: Role.SYSTEM, content: "Env: linux" },
            { role: Role.USER, content: "Go" },
          ],
        },
      },
    });
    const { text } = await client.detokenize({ tokens });
    // Detokenized without special tokens: the turn markers do not show, their order does.
    expect(text).toContain("user\nHi\nsystem\nEnv: linux\nuser\nGo");
  });

  it("are merged into the system prompt, in order, for a template that refuses or drops them", () => {
    const refusing = {
      generateContextState: ({ chatHistory }: { chatHistory: ChatHistoryItem[] }) => {
        if (chatHistory.slice(1).some((item) => item.type === "system"))
          throw new Error("System message must be at the beginning");
        return {
          contextText: { toString: () => chatHistory.map((item) => ("text" in item ? item.text : "")).join("|") },
        };
      },
    } as unknown as ChatWrapper;
    const dropping = {
      generateContextState: ({ chatHistory }: { chatHistory: ChatHistoryItem[] }) => ({
        contextText: {
          toString: () =>
            chatHistory
              .filter((item, i) => i === 0 || item.type !== "system")
              .map((item) => ("text" in item ? item.text : ""))
              .join("|"),
        },
      }),
    } as unknown as ChatWrapper;
    expect(rendersSystemInPlace(refusing)).toBe(false);
    expect(rendersSystemInPlace(dropping)).toBe(false);
    const history: ChatHistoryItem[] = [
      { type: "system", text: "Be brief." },
      { type: "user", text: "Hi" },
      { type: "system", text: "Env: linux" },
      { type: "model", response: [] },
    ];
    expect(systemFirst(history)).toEqual([
      { type: "system", text: "Be brief.\n\nEnv: linux" },
      { type: "user", text: "Hi" },
      { type: "model", response: [] },
    ]);
  });
});
