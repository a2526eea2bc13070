// One request's spans (docs/decisions.md, "Traces"): the HTTP server span, continued from the
// client's `traceparent` or a new trace, and the GenAI span of its generation (a child), whose
// context the sidecar call carries in its `traceparent` header. Both end when the request's log
// line is written: a stream's when it ends or its client leaves.
import {
  type Attributes,
  context as contexts,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { Finish, GenerateRequest, Start, Token } from "../../proto/gen/inference/v1/inference_pb.js";
import { ATTR, operationOf, PROVIDER, requestAttributes, usageAttributes } from "./genai.js";
import type { Tracing } from "./host-tracing.js";

const headerGetter = {
  keys: (carrier: Headers) => [...carrier.keys()],
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
};
const recordSetter = {
  set(carrier: Record<string, string>, key: string, value: string) {
    carrier[key] = value;
  },
};

/** How a request ended, as its log line says it (core/request-log.ts). */
export interface RequestEnd {
  readonly status: number;
  readonly outcome: string;
  readonly errorType: string | undefined;
}

export class RequestTrace {
  readonly #server: Span;
  readonly #parent: Context;
  #genAi: Span | undefined;
  readonly #finishes: Finish[] = [];
  #reply = "";

  constructor(
    private readonly tracing: Tracing,
    private readonly request: Request,
    path: string,
  ) {
    const parent = tracing.propagator.extract(contexts.active(), request.headers, headerGetter);
    this.#server = tracing.tracer.startSpan(
      request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": request.method,
          "url.path": path,
          "url.scheme": new URL(request.url).protocol.slice(0, -1),
        },
      },
      parent,
    );
    this.#parent = trace.setSpan(parent, this.#server);
  }

  /** The route that matched (`http.route`); the span's name becomes `{method} {route}`. */
  route(route: string): void {
    this.#server.setAttribute("http.route", route);
    this.#server.updateName(`${this.request.method} ${route}`);
  }

  /** The W3C trace context of this request, for a response header (`traceparent`). */
  traceparent(): string {
    const { traceId, spanId, traceFlags } = this.#server.spanContext();
    return `00-${traceId}-${spanId}-0${traceFlags.toString(16)}`;
  }

  /** Opens the GenAI span of the request's generation; returns the headers that carry it to the sidecar. */
  generation(
    request: GenerateRequest,
    stream: boolean,
    conversationId: string | undefined,
    body: unknown,
  ): Record<string, string> {
    const attributes = requestAttributes(request, stream, conversationId);
    if (this.tracing.captureContent) attributes[ATTR.inputMessages] = JSON.stringify(inputOf(body));
    return this.#open(`${operationOf(request)} ${request.model}`, attributes);
  }

  /** Opens the GenAI span of an Embed call (`embeddings {model}`); returns the headers for the sidecar. */
  embeddings(model: string): Record<string, string> {
    return this.#open(`embeddings ${model}`.trimEnd(), {
      [ATTR.operation]: "embeddings",
      [ATTR.provider]: PROVIDER,
      [ATTR.requestModel]: model,
    });
  }

  /** The Embed call's answer: the tokens its inputs took and the model that answered. */
  embedded(inputTokens: number, model: string): void {
    this.#genAi?.setAttributes({ [ATTR.inputTokens]: inputTokens, [ATTR.responseModel]: model });
  }

  #open(name: string, attributes: Attributes): Record<string, string> {
    this.#genAi = this.tracing.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, this.#parent);
    const headers: Record<string, string> = {};
    this.tracing.propagator.inject(trace.setSpan(this.#parent, this.#genAi), headers, recordSetter);
    return headers;
  }

  /** The sidecar accepted the generation: its response id and the model that answers. */
  started(start: Start, responseId: string, model: string): void {
    this.#genAi?.setAttributes({
      [ATTR.responseId]: responseId,
      [ATTR.responseModel]: model,
      [ATTR.inputTokens]: start.promptTokens,
    });
  }

  token(token: Token): void {
    if (this.tracing.captureContent && token.choice === 0) this.#reply += token.text;
  }

  finished(finish: Finish): void {
    this.#finishes.push(finish);
    if (this.tracing.captureContent && finish.choice === 0) this.#reply += finish.text;
  }

  /** Ends both spans as the request ended. */
  end(how: RequestEnd): void {
    const genAi = this.#genAi;
    if (genAi !== undefined) {
      genAi.setAttributes(usageAttributes(this.#finishes));
      if (this.tracing.captureContent && this.#finishes.length > 0)
        genAi.setAttribute(
          ATTR.outputMessages,
          JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: this.#reply }] }]),
        );
      endSpan(genAi, how);
    }
    this.#server.setAttribute("http.response.status_code", how.status);
    endSpan(this.#server, how);
    this.tracing.onEnded?.(this.request);
  }
}

/** A span's end: `error.type` and an error status on a failure, an event when the client left. */
function endSpan(span: Span, how: RequestEnd): void {
  if (how.outcome === "error") {
    span.setAttribute(ATTR.errorType, how.errorType ?? String(how.status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  if (how.outcome === "client_left") span.addEvent("client_left");
  span.end();
}

/** The request's messages as the caller sent them (only with content capture on). */
function inputOf(body: unknown): unknown {
  if (typeof body !== "object" || body === null) return undefined;
  const fields = body as Record<string, unknown>;
  return fields["messages"] ?? fields["input"] ?? fields["prompt"];
}
