// Per-key request limits (`RATE_LIMIT`: requests per minute per key). The edge asks a RateLimiter
// before any work; the Worker backs it with the platform's Rate Limiting binding, the Node entry
// with an in-memory limiter (edge/hosts/node/env.ts). Keyless servers count every request under one id.

export interface RateLimitVerdict {
  readonly allowed: boolean;
  /** When refused: seconds until a request may succeed again (the `Retry-After` header). */
  readonly retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Counts one request of `keyId` and says whether it is within the limit. */
  check(keyId: string): Promise<RateLimitVerdict>;
}

/** The Workers Rate Limiting binding (`[[ratelimits]]` in wrangler.toml). */
export interface RateLimitBinding {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

/** A RateLimiter over the Workers binding, whose window is `periodSeconds` (10 or 60). */
export function bindingRateLimiter(binding: RateLimitBinding, periodSeconds: number): RateLimiter {
  return {
    async check(keyId) {
      const { success } = await binding.limit({ key: keyId });
      return { allowed: success, retryAfterSeconds: periodSeconds };
    },
  };
}
