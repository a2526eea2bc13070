// Tool calls this sidecar made, told apart by their ids, and such a call given back to the chat
// template as it was produced when its arguments are unfinished (a reply cut by its token limit in
// the middle of them; docs/decisions.md, "The server takes back what it made").
import { createHash, randomBytes } from "node:crypto";
import { LlamaText, type ChatModelFunctionCall, type ChatWrapper } from "node-llama-cpp";

const PREFIX = "call_";
/** The random part of an id: 15 bytes, 20 base64url characters. */
const RANDOM_BYTES = 15;
/** Binds an id to this project's sidecars (any of them, any version): not a secret. */
const TAG = "llm-edge tool call";

const checkOf = (random: string): string =>
  createHash("sha256").update(TAG).update(random).digest().subarray(0, 3).toString("base64url");

/** A tool call's id: `call_`, 20 random characters and 4 that check them (24 in all). */
export function newCallId(): string {
  const random = randomBytes(RANDOM_BYTES).toString("base64url");
  return `${PREFIX}${random}${checkOf(random)}`;
}

/** Whether `id` is one newCallId made (on this sidecar or another of this project). */
export function isOwnCallId(id: string): boolean {
  if (!id.startsWith(PREFIX) || id.length !== PREFIX.length + 24) return false;
  const random = id.slice(PREFIX.length, -4);
  return id.slice(-4) === checkOf(random);
}

/** Stands for the arguments while the wrapper renders the call around them. */
const PLACEHOLDER = "llm-edge-arguments-4b9e";

/**
 * A call whose arguments are text that is not JSON, as the template renders it: the text itself
 * where the wrapper writes calls (`rawCall`: the wrapper's prefix, name and suffix around it), and
 * the text as the arguments' value where a Jinja template writes them.
 */
export function callAsProduced(
  wrapper: ChatWrapper,
  name: string,
  text: string,
): Pick<ChatModelFunctionCall, "params" | "rawCall"> {
  const quoted = JSON.stringify(PLACEHOLDER);
  const written = wrapper.generateFunctionCall(name, PLACEHOLDER);
  if (!written.values.some((value) => typeof value === "string" && value.includes(quoted))) return { params: text };
  const raw = written.mapValues((value) => (typeof value === "string" ? value.replace(quoted, () => text) : value));
  return { params: text, rawCall: LlamaText(raw).toJSON() };
}
