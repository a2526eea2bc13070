// Fake-sidecar scripts and tool definitions the tool tests of every protocol share.
import { finish, reasoning, start, token, toolCall, type Step } from "./fake-sidecar.js";

/** get_weather's parameters, as every protocol's tests offer it. */
export const WEATHER_PARAMETERS = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
};

/** get_weather as a chat-completions tool. */
export const chatWeatherTool = {
  type: "function",
  function: { name: "get_weather", description: "Get weather for a city", parameters: WEATHER_PARAMETERS },
};

/** One get_weather call with the contract's argument fragments. */
export const weatherCallScript: Step[] = [
  start("tiny-llama", 40),
  ...toolCall(0, "call_weather", "get_weather", ['{"', "city", '":"Tokyo"}']),
  finish("tool_calls", { promptTokens: 40, completionTokens: 4 }),
];

/** Two get_weather calls in one reply. */
export const twoCallsScript: Step[] = [
  start("tiny-llama", 40),
  ...toolCall(0, "call_1", "get_weather", ['{"city":', '"Tokyo"}']),
  ...toolCall(1, "call_2", "get_weather", ['{"city":', '"Paris"}']),
  finish("tool_calls", { promptTokens: 40, completionTokens: 6 }),
];

/** Reasoning, then the answer: "<think>Checking the forecast.</think>It is sunny." */
export const thinkingSteps = (): Step[] => [
  token("", { piece: "<think>" }),
  ...reasoning("Checking", " the forecast."),
  token("It", { piece: "</think>It" }),
  token(" is sunny."),
];
