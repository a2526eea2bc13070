// Who may use the edge, decided before any work (docs/contract.md, "Access"):
// - keys: `API_KEYS` or `ADMIN_KEYS` is set; every route but /health needs one of them (401 otherwise), and
//   the routes that change the catalogue an admin key (403 otherwise: caller.ts, requireAdmin);
// - loopback: no keys; only requests addressed to a loopback host, from no origin or a loopback one;
// - open: no keys and `ALLOW_OPEN=true`; anyone.
// Browsers: a request whose `Origin` is not allowed is refused with 403, not merely left
// unreadable. `CORS_ORIGINS` lists the allowed origins (or `*`); unset, keys and open mode allow
// any origin (keys are not cookies), loopback mode only loopback pages.
import { AuthenticationError, KeyRateLimitError, PermissionDeniedError } from "../base/errors.js";
import { ANONYMOUS, LOCAL, type Caller } from "./caller.js";
import { matchKey, parseApiKeys, presentedKeys, type ConfiguredKey, type DigestCompare } from "./keys.js";
import { isLoopbackHostname, isLoopbackOrigin } from "./loopback.js";
import type { RateLimiter } from "./rate-limit.js";

export type AccessMode = "keys" | "loopback" | "open";

export interface AccessOptions {
  /** `API_KEYS`: comma-separated keys or `sha256:<hex>` digests. */
  apiKeys?: string;
  /** `ADMIN_KEYS`: keys that may also change the catalogue, in the same form; each is a client key too. */
  adminKeys?: string;
  /** `ALLOW_OPEN=true`: serve any host without keys. */
  allowOpen?: boolean;
  /** `CORS_ORIGINS`: comma-separated origins, or `*`. */
  corsOrigins?: string;
  /** Per-key limits; none when unset. */
  rateLimiter?: RateLimiter;
  /** The digest comparison (tests pass a spy to see it used). */
  compare?: DigestCompare;
}

/** Routes that answer without a key (monitoring must not need a secret). */
const KEYLESS_PATHS = new Set(["/health"]);

export interface AccessPolicy {
  readonly mode: AccessMode;
  /** One line for the start-up log: the mode in force, never a key. */
  describe(): string;
  /** The `Access-Control-Allow-Origin` value for an allowed request (undefined: add none). */
  allowOrigin(request: Request): string | undefined;
  /** Checks host, origin, key and rate; throws the ApiError to answer, else returns the caller. */
  admit(request: Request, url: URL): Promise<Caller>;
}

function parseOrigins(text: string | undefined): "*" | Set<string> | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  const entries = text
    .split(",")
    .map((entry) => entry.trim().replace(/\/$/, "").toLowerCase())
    .filter((e) => e !== "");
  return entries.includes("*") ? "*" : new Set(entries);
}

function modeOf(options: AccessOptions): AccessMode {
  const given = (text: string | undefined) => (text ?? "").split(",").some((entry) => entry.trim() !== "");
  if (given(options.apiKeys) || given(options.adminKeys)) return "keys";
  return options.allowOpen === true ? "open" : "loopback";
}

const DESCRIPTIONS: Record<AccessMode, string> = {
  keys: "API keys required (API_KEYS, ADMIN_KEYS)",
  loopback: "no API keys: serving loopback hosts and pages only (set API_KEYS, or ALLOW_OPEN=true)",
  open: "no API keys and ALLOW_OPEN=true: open to anyone who reaches it",
};

export function createAccessPolicy(options: AccessOptions = {}): AccessPolicy {
  const mode = modeOf(options);
  const origins = parseOrigins(options.corsOrigins);
  let keys: Promise<{ all: ConfiguredKey[]; admin: ConfiguredKey[] }> | undefined;
  const originAllowed = (origin: string, url: URL): boolean => {
    if (origin.toLowerCase() === url.origin.toLowerCase()) return true; // same origin
    if (origins === "*") return true;
    if (origins !== undefined) return origins.has(origin.toLowerCase());
    return mode === "loopback" ? isLoopbackOrigin(origin) : true;
  };
  return {
    mode,
    describe: () => {
      const cors = origins === undefined ? "" : `; CORS origins: ${origins === "*" ? "*" : [...origins].join(", ")}`;
      return `access: ${DESCRIPTIONS[mode]}${cors}`;
    },
    allowOrigin(request) {
      if (origins === "*" || (origins === undefined && mode !== "loopback")) return "*";
      const origin = request.headers.get("origin");
      return origin !== null && originAllowed(origin, new URL(request.url)) ? origin : undefined;
    },
    async admit(request, url) {
      if (mode === "loopback" && !isLoopbackHostname(url.hostname)) throw hostRefused(url.hostname);
      const origin = request.headers.get("origin");
      if (origin !== null && !originAllowed(origin, url)) throw originRefused(origin);
      if (request.method === "OPTIONS" || KEYLESS_PATHS.has(url.pathname)) return ANONYMOUS;
      let caller = mode === "loopback" ? LOCAL : ANONYMOUS;
      if (mode === "keys") {
        keys ??= configuredKeys(options);
        const { all, admin } = await keys;
        const presented = presentedKeys(request);
        const match = await matchKey(all, presented, options.compare);
        if (match === undefined) throw keyRefused(presented.length > 0);
        caller = { keyId: match.id, ...(admin.includes(match) ? { admin: true } : {}) };
      }
      if (options.rateLimiter !== undefined) {
        const verdict = await options.rateLimiter.check(caller.keyId);
        if (!verdict.allowed) throw rateRefused(verdict.retryAfterSeconds);
      }
      return caller;
    },
  };
}

/** Client keys and admin keys, parsed once; an admin key is a client key too. */
async function configuredKeys(options: AccessOptions): Promise<{ all: ConfiguredKey[]; admin: ConfiguredKey[] }> {
  const [client, admin] = await Promise.all([
    parseApiKeys(options.apiKeys),
    parseApiKeys(options.adminKeys, "ADMIN_KEYS"),
  ]);
  return { all: [...client, ...admin], admin };
}

function hostRefused(hostname: string): PermissionDeniedError {
  return new PermissionDeniedError(
    `This server has no API keys configured, so it answers only requests addressed to a loopback host (localhost, ` +
      `127.0.0.1, ` +
      `::1), not '${hostname}'. Set API_KEYS, or ALLOW_OPEN=true to serve any host without keys.`,
    { code: "host_not_allowed" },
  );
}

function originRefused(origin: string): PermissionDeniedError {
  return new PermissionDeniedError(
    `Requests from the web origin '${origin}' are not allowed here. Add it to CORS_ORIGINS to allow it.`,
    {
      code: "origin_not_allowed",
    },
  );
}

function keyRefused(presented: boolean): AuthenticationError {
  const message = presented
    ? "Incorrect API key provided."
    : "No API key provided. Send it as 'Authorization: Bearer <key>' or 'x-api-key: <key>'.";
  return new AuthenticationError(message, { code: "invalid_api_key" });
}

function rateRefused(retryAfterSeconds: number): KeyRateLimitError {
  return new KeyRateLimitError("Rate limit reached for this API key. Retry after the time in the Retry-After header.", {
    code: "rate_limit_exceeded",
    headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });
}
