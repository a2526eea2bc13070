// Server-Sent Events framing (WHATWG HTML §9.2): text only, no streams here.

export interface SseEvent {
  /** The `event:` name; omitted for plain `message` events. */
  event?: string;
  /** The payload; a multi-line payload becomes several `data:` lines. */
  data: string;
  id?: string;
}

function assertSingleLine(field: string, value: string): void {
  if (/[\r\n]/.test(value)) throw new Error(`SSE ${field} must not contain a line break`);
}

/** One event, terminated by the blank line that dispatches it. */
export function formatEvent(event: SseEvent): string {
  let out = "";
  if (event.event !== undefined) {
    assertSingleLine("event", event.event);
    out += `event: ${event.event}\n`;
  }
  if (event.id !== undefined) {
    assertSingleLine("id", event.id);
    out += `id: ${event.id}\n`;
  }
  for (const line of event.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** An event whose payload is the JSON of `value`, named `event` if given. */
export function jsonEvent(value: unknown, event?: string): SseEvent {
  return event === undefined ? { data: JSON.stringify(value) } : { event, data: JSON.stringify(value) };
}

/** A `data:` event whose payload is the JSON of `value`, formatted. */
export function formatJsonEvent(value: unknown, event?: string): string {
  return formatEvent(jsonEvent(value, event));
}

/** The `data: [DONE]` sentinel that ends OpenAI-style streams (chat, completions and Responses). */
export const DONE: SseEvent = { data: "[DONE]" };

/** A comment line (ignored by every SSE reader; used for keep-alive pings). */
export function formatComment(text: string): string {
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => `: ${line}\n`)
    .join("");
}
