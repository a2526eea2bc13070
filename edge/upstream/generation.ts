// The one completion path shared by every protocol: open the sidecar's Generate
// stream, wait for `start` (the sidecar's "request accepted"), then hand out the
// token and finish events in order. Protocol-neutral: no OpenAI/Anthropic shapes.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  Finish,
  GenerateRequest,
  GenerateResponse,
  Progress,
  ResumeRequestSchema,
  Start,
  Token,
} from "../../proto/gen/inference/v1/inference_pb.js";
import { linkedAbort } from "../base/abort.js";
import { GatewayTimeoutError, ServerError } from "../base/errors.js";
import type { Sidecar } from "./connection.js";

export type GenerationEvent =
  | { case: "token"; value: Token }
  | { case: "finish"; value: Finish }
  // With GenerateRequest.return_progress: before the first token (a whole answer skips them).
  | { case: "progress"; value: Progress };

export interface OpenedGeneration {
  readonly start: Start;
  /**
   * Token events, then exactly one finish event; throws if the sidecar fails. With several choices
   * (GenerateRequest.n), their token events interleaved and one finish per choice, each naming its
   * choice (`Token.choice`, `Finish.choice`).
   */
  readonly events: AsyncGenerator<GenerationEvent, void, undefined>;
}

export interface GenerationResult {
  readonly start: Start;
  readonly tokens: readonly Token[];
  /** The whole reply: the concatenated texts of the token events. */
  readonly text: string;
  readonly finish: Finish;
}

function protocolError(what: string): ServerError {
  return new ServerError(`The inference sidecar broke its protocol: ${what}.`);
}

/**
 * The sidecar's stream with a stall deadline: when nothing arrives for `stallMs` (not even a
 * heartbeat, which the sidecar sends every few seconds of silence), the call is cancelled and
 * reading fails with a 504-class error. 0 turns the deadline off.
 */
function watched(
  iterator: AsyncIterator<GenerateResponse>,
  stallMs: number,
  call: AbortController,
): AsyncIterator<GenerateResponse> {
  if (stallMs <= 0) return iterator;
  return {
    next: async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          call.abort(new Error("the sidecar stalled"));
          reject(
            new GatewayTimeoutError(`The inference sidecar stopped answering: nothing from it for ${stallMs} ms.`, {
              code: "sidecar_stalled",
            }),
          );
        }, stallMs);
      });
      try {
        const next = iterator.next();
        next.catch(() => undefined); // a call cancelled on a stall fails later: nobody waits for it
        return await Promise.race([next, stalled]);
      } finally {
        clearTimeout(timer);
      }
    },
    return: async () => (await iterator.return?.()) ?? { done: true, value: undefined },
  };
}

async function drain(iterator: AsyncIterator<GenerateResponse>): Promise<void> {
  // Nothing may follow `finish`; reading to the end lets the call complete cleanly.
  try {
    while ((await iterator.next()).done !== true);
  } catch {
    // The reply is complete; a failure after `finish` changes nothing.
  }
}

async function* afterStart(
  iterator: AsyncIterator<GenerateResponse>,
  snapshot: boolean,
  choices: number,
): AsyncGenerator<GenerationEvent, void, undefined> {
  let finished = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done === true) {
      if (snapshot) return; // a snapshot ends where the generation has got to
      throw protocolError("the stream ended without a finish event");
    }
    const event = next.value.event;
    switch (event.case) {
      case "token":
      case "progress":
        yield event;
        break;
      case "finish":
        yield event;
        if (++finished < choices) break;
        await drain(iterator);
        return;
      case "start":
        throw protocolError("a second start event");
      case "heartbeat":
      case undefined:
        break; // a heartbeat only resets the stall deadline; an event this edge does not know yet is skipped
      default: {
        const unexpected: never = event;
        throw protocolError(`unknown event ${JSON.stringify(unexpected)}`);
      }
    }
  }
}

/**
 * Calls Generate and waits for its `start` event. Rejects with the sidecar's error
 * (a ConnectError) when it refuses the request, so callers can still choose the
 * HTTP status. `signal` cancels the sidecar call (docs/decisions.md, "Cancellation chain"); so
 * does a sidecar that sends nothing for `stallMs` (0: never), with a GatewayTimeoutError.
 * `headers` go with the call (a trace's `traceparent`: docs/decisions.md, "Traces").
 */
export function openGeneration(
  sidecar: Sidecar,
  request: GenerateRequest,
  signal: AbortSignal,
  stallMs = 0,
  headers?: Readonly<Record<string, string>>,
): Promise<OpenedGeneration> {
  const options = (callSignal: AbortSignal) =>
    headers === undefined ? { signal: callSignal } : { signal: callSignal, headers };
  return openEvents(
    (callSignal) => sidecar.generate(request, options(callSignal)),
    signal,
    stallMs,
    false,
    Math.max(1, request.n),
  );
}

/** A resumable generation read again from its start (proto: Resume), as openGeneration opens one. */
export function openResumed(
  sidecar: Sidecar,
  request: MessageInitShape<typeof ResumeRequestSchema>,
  signal: AbortSignal,
  stallMs = 0,
): Promise<OpenedGeneration> {
  // A resumable generation has one choice (proto: GenerateRequest.n).
  return openEvents(
    (callSignal) => sidecar.resume(request, { signal: callSignal }),
    signal,
    stallMs,
    request.snapshot === true,
    1,
  );
}

async function openEvents(
  call: (signal: AbortSignal) => AsyncIterable<GenerateResponse>,
  signal: AbortSignal,
  stallMs: number,
  snapshot: boolean,
  choices: number,
): Promise<OpenedGeneration> {
  const controller = linkedAbort(signal);
  const iterator = watched(call(controller.signal)[Symbol.asyncIterator](), stallMs, controller);
  for (;;) {
    const next = await iterator.next();
    if (next.done === true) throw protocolError("the stream ended without a start event");
    const event = next.value.event;
    switch (event.case) {
      case "start":
        return { start: event.value, events: afterStart(iterator, snapshot, choices) };
      case "token":
      case "finish":
      case "progress":
        throw protocolError(`a ${event.case} event before start`);
      case "heartbeat":
      case undefined:
        break;
      default: {
        const unexpected: never = event;
        throw protocolError(`unknown event ${JSON.stringify(unexpected)}`);
      }
    }
  }
}

/** Reads a whole generation (non-streaming responses). */
export async function collectGeneration(opened: OpenedGeneration): Promise<GenerationResult> {
  const result = await collectSoFar(opened);
  if (result.finish === undefined) throw protocolError("the stream ended without a finish event");
  return { ...result, finish: result.finish };
}

/** Reads a whole generation of several choices (GenerateRequest.n): one result per choice, in index order. */
export async function collectChoices(opened: OpenedGeneration, choices: number): Promise<GenerationResult[]> {
  const tokens = Array.from({ length: choices }, (): Token[] => []);
  const finishes: (Finish | undefined)[] = Array.from({ length: choices }, () => undefined);
  for await (const event of opened.events) {
    if (event.case === "progress") continue;
    const choice = event.value.choice;
    if (choice >= choices) throw protocolError(`an event of choice ${choice} in a generation of ${choices} choices`);
    if (event.case === "token") tokens[choice]?.push(event.value);
    else finishes[choice] = event.value;
  }
  return tokens.map((list, choice) => {
    const finish = finishes[choice];
    if (finish === undefined) throw protocolError(`choice ${choice} ended without a finish event`);
    return { start: opened.start, tokens: list, text: list.map((t) => t.text).join("") + finish.text, finish };
  });
}

/** Reads a generation as far as its events go (a snapshot may end before the finish). */
export async function collectSoFar(
  opened: OpenedGeneration,
): Promise<Omit<GenerationResult, "finish"> & { finish: Finish | undefined }> {
  const tokens: Token[] = [];
  let text = "";
  let finish: Finish | undefined;
  // Read to the end (not just to `finish`) so the call completes cleanly.
  for await (const event of opened.events) {
    switch (event.case) {
      case "token":
        tokens.push(event.value);
        text += event.value.text;
        break;
      case "finish":
        finish = event.value;
        text += event.value.text;
        break;
      case "progress":
        break;
      default: {
        const unexpected: never = event;
        throw protocolError(`unknown event ${JSON.stringify(unexpected)}`);
      }
    }
  }
  return { start: opened.start, tokens, text, finish };
}
