// Builds the edge app around a fake sidecar with a fixed id and clock, so response
// bodies are byte-for-byte reproducible.
import { createApp, type App, type AppOptions } from "../../edge/http/app.js";
import type { Chat } from "../../proto/gen/inference/v1/inference_pb.js";
import { FakeSidecar, type Script } from "./fake-sidecar.js";

export const FIXED_ID = "test0000000000000000id01";
/** 2023-11-14T22:13:20Z */
export const FIXED_NOW_MS = 1_700_000_000_000;
export const FIXED_CREATED = 1_700_000_000;

export interface TestApp {
  app: App;
  sidecar: FakeSidecar;
}

export function testApp(script?: Script, options: Partial<AppOptions> = {}): TestApp {
  const sidecar = new FakeSidecar(script);
  const app = createApp({
    sidecar,
    newId: () => FIXED_ID,
    now: () => FIXED_NOW_MS,
    onUnexpectedError: () => undefined,
    // The fake host below is not a loopback name: these tests run the edge as an open server.
    access: { allowOpen: true },
    ...options,
  });
  return { app, sidecar };
}

/** The Chat the fake sidecar was last asked to generate from. */
export function sentChat(sidecar: FakeSidecar): Chat {
  const input = sidecar.lastCall?.request.input;
  if (input?.case !== "chat") throw new Error("no chat request");
  return input.value;
}

export const BASE = "http://edge.test";

/** POSTs `body`: a string or bytes as is, anything else as JSON. */
export function post(app: App, path: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  const raw: BodyInit =
    typeof body === "string" ? body : body instanceof Uint8Array ? new Uint8Array(body) : JSON.stringify(body);
  return app.fetch(
    new Request(`${BASE}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: raw,
      ...init,
    }),
  );
}

export function get(app: App, path: string, init: RequestInit = {}): Promise<Response> {
  return app.fetch(new Request(`${BASE}${path}`, init));
}

/** A `fetch` for SDK clients that runs the app in-process. */
export function inProcessFetch(app: App): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return (input, init) => app.fetch(new Request(input, init));
}
