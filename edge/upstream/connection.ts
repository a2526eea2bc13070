// The edge's view of the sidecar: the generated InferenceService client, spoken as
// binary gRPC-Web over fetch (docs/decisions.md, "gRPC-Web from the edge") so the same code runs in workerd and Node.
// Tests substitute a fake that implements the same `Sidecar` type.
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { Health } from "../../proto/gen/grpc/health/v1/health_pb.js";
import { InferenceService } from "../../proto/gen/inference/v1/inference_pb.js";

export type Sidecar = Client<typeof InferenceService>;
/** The sidecar's grpc.health.v1 service (over gRPC-Web, as the rest). */
export type SidecarHealth = Client<typeof Health>;

/** Where the sidecar listens unless configured otherwise. */
export const DEFAULT_SIDECAR_URL = "http://127.0.0.1:50051";

export type FetchImpl = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}

/**
 * A fetch that cannot reach the sidecar throws a plain TypeError, which connect
 * would report as Code.Unknown; it is really "unavailable" (→ HTTP 503).
 */
const unreachableIsUnavailable: Interceptor = (next) => async (request) => {
  try {
    return await next(request);
  } catch (error) {
    if (error instanceof ConnectError || isAbort(error) || !(error instanceof Error)) throw error;
    throw new ConnectError("The inference sidecar is unreachable.", Code.Unavailable, undefined, undefined, error);
  }
};

export interface SidecarLink {
  /** `SIDECAR_TOKEN`: sent as `authorization: Bearer <token>` on every call. */
  readonly token?: string | undefined;
  /** `SIDECAR_HEADERS`: more headers for every call (a tunnel's or access proxy's credentials). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** Adds the link's credentials to every call. */
function credentials(link: SidecarLink): Interceptor {
  const headers = { ...link.headers, ...(link.token ? { authorization: `Bearer ${link.token}` } : {}) };
  return (next) => (request) => {
    for (const [name, value] of Object.entries(headers)) request.header.set(name, value);
    return next(request);
  };
}

/**
 * Creates the gRPC-Web client for the sidecar at `baseUrl` (e.g. "http://127.0.0.1:50051").
 * `fetchImpl` defaults to the global fetch; every call is made with `redirect: "manual"`
 * because workerd does not implement the `redirect: "error"` that connect-web asks for.
 */
export function createSidecarClient(baseUrl: string, fetchImpl?: FetchImpl, link: SidecarLink = {}): Sidecar {
  return createClient(InferenceService, sidecarTransport(baseUrl, fetchImpl, link));
}

/** The health service of the sidecar at `baseUrl`, on the same kind of transport. */
export function createSidecarHealthClient(
  baseUrl: string,
  fetchImpl?: FetchImpl,
  link: SidecarLink = {},
): SidecarHealth {
  return createClient(Health, sidecarTransport(baseUrl, fetchImpl, link));
}

function sidecarTransport(baseUrl: string, fetchImpl: FetchImpl | undefined, link: SidecarLink) {
  // Call the global fetch as `fetch(...)`: workerd rejects it when invoked with another `this`.
  const send: FetchImpl = fetchImpl ?? ((input, init) => fetch(input, init));
  return createGrpcWebTransport({
    baseUrl,
    useBinaryFormat: true,
    interceptors: [unreachableIsUnavailable, credentials(link)],
    fetch: (input, init) => send(input, { ...init, redirect: "manual" }),
  });
}
