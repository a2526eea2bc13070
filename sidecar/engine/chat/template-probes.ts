// The chats a built-in chat wrapper must render exactly as the model's template renders them to be
// used in its place (prompt.ts, templateSource): a plain exchange with a system message, and a
// tool call with its result under an offered tool.
import { create } from "@bufbuild/protobuf";
import { ChatSchema, Role, ToolChoice, type Chat } from "../../../proto/gen/inference/v1/inference_pb.js";

const WEATHER = JSON.stringify({ type: "object", properties: { city: { type: "string" } }, required: ["city"] });

export const PROBE_CHATS: readonly Chat[] = [
  create(ChatSchema, {
    messages: [
      { role: Role.SYSTEM, content: "Be brief." },
      { role: Role.USER, content: "Hello" },
      { role: Role.ASSISTANT, content: "Hi there" },
      { role: Role.USER, content: "And now?" },
    ],
  }),
  create(ChatSchema, {
    messages: [
      { role: Role.USER, content: "Weather in Paris?" },
      { role: Role.ASSISTANT, toolCalls: [{ id: "call00001", name: "get_weather", arguments: '{"city":"Paris"}' }] },
      { role: Role.TOOL, toolCallId: "call00001", content: "sunny" },
    ],
    tools: [{ name: "get_weather", description: "The weather in a city.", parameters: WEATHER }],
    toolChoice: ToolChoice.AUTO,
  }),
];
