// A history's call ids as a family's template wants them. Clients keep the ids this server gave
// (`call_` + 24 characters, unique in a conversation); the template sees, for the same id, the same
// id in its own form every time it renders, so a call and its result still match and the rendered
// prefix stays the same from turn to turn (docs/decisions.md, "Call ids in a family's form").
import { createHash } from "node:crypto";
import type { CallIdForm } from "../syntax/reply-syntax.js";

type Message = Record<string, unknown>;
interface TemplateCall {
  readonly id: string;
  readonly function: { readonly name: string };
}

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Mistral's form: 9 letters and digits. An id already so is kept; any other is hashed into one. */
export function nineCharacterId(id: string): string {
  if (/^[A-Za-z0-9]{9}$/.test(id)) return id;
  const digest = createHash("sha256").update(id).digest();
  return Array.from(digest.subarray(0, 9), (byte) => ALPHANUMERIC[byte % ALPHANUMERIC.length]).join("");
}

/** The form's id of every call in the history, by the id the client sent. */
function formIds(messages: readonly Message[], form: CallIdForm | "nine"): Map<string, string> {
  const ids = new Map<string, string>();
  for (const message of messages) {
    const calls = (message.tool_calls as readonly TemplateCall[] | undefined) ?? [];
    calls.forEach((call, index) => {
      ids.set(call.id, form === "nine" ? nineCharacterId(call.id) : `functions.${call.function.name}:${index}`);
    });
  }
  return ids;
}

/** The messages with their call ids, and their results' `tool_call_id`, in the template's form. */
export function idsInForm(messages: readonly Message[], form: CallIdForm | "nine"): Message[] {
  const ids = formIds(messages, form);
  const mapped = (id: unknown): unknown =>
    typeof id === "string" ? (ids.get(id) ?? (form === "nine" ? nineCharacterId(id) : id)) : id;
  return messages.map((message) => {
    if (message.role === "tool") return { ...message, tool_call_id: mapped(message.tool_call_id) };
    const calls = message.tool_calls as readonly TemplateCall[] | undefined;
    return calls === undefined
      ? message
      : { ...message, tool_calls: calls.map((call) => ({ ...call, id: mapped(call.id) })) };
  });
}
