// The KV cache tier's priorities (kv-tier.ts): a prefix a request marked (`GenerateRequest.cache_marks`)
// is kept ahead of unmarked states until its mark expires. docs/decisions.md, "Cache hints".

/** A marked prefix: its first `tokens` tokens are worth keeping until `expiresAt` (wall-clock ms). */
export interface KvMark {
  readonly tokens: number;
  readonly expiresAt: number;
}

/** A request's mark as the tier takes it: where the prefix ends and how long it is kept after this use. */
export interface MarkRequest {
  readonly tokens: number;
  readonly ttlMs: number;
}

/** The most marks one state keeps (the latest to expire). */
const MAX_MARKS = 8;

/**
 * The marks still in force at `now` whose prefix lies within the first `within` tokens, merged by
 * position (the later expiry wins), the latest to expire first, at most MAX_MARKS.
 */
export function liveMarks(marks: readonly KvMark[], now: number, within: number): KvMark[] {
  const byPosition = new Map<number, number>();
  for (const mark of marks) {
    if (mark.expiresAt <= now || mark.tokens > within || mark.tokens <= 0) continue;
    byPosition.set(mark.tokens, Math.max(byPosition.get(mark.tokens) ?? 0, mark.expiresAt));
  }
  return [...byPosition]
    .map(([tokens, expiresAt]) => ({ tokens, expiresAt }))
    .sort((a, b) => b.expiresAt - a.expiresAt)
    .slice(0, MAX_MARKS);
}

/** The marks an index entry (`--cache-dir`) holds: those well formed, or none. */
export function readMarks(value: unknown): KvMark[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const marks = value.filter(
    (mark): mark is KvMark =>
      typeof mark === "object" && mark !== null && Number.isInteger(mark.tokens) && Number.isFinite(mark.expiresAt),
  );
  return marks.length === 0 ? undefined : marks;
}

/** A request's marks, from `now` on. */
export function marksFrom(requests: readonly MarkRequest[], now: number): KvMark[] {
  return requests.map((mark) => ({ tokens: mark.tokens, expiresAt: now + mark.ttlMs }));
}

/** When a state's last mark expires; 0 when none is in force (the state is kept by recency alone). */
export function keptUntil(marks: readonly KvMark[] | undefined, now: number): number {
  let until = 0;
  for (const mark of marks ?? []) if (mark.expiresAt > now) until = Math.max(until, mark.expiresAt);
  return until;
}

/**
 * The order states leave the tier in: unmarked (or expired) ones first, least recently used first
 * (`entries` is in recency order), then marked ones, the earliest to expire first.
 */
export function evictionOrder<K>(
  entries: Iterable<[K, { readonly marks?: readonly KvMark[] | undefined }]>,
  now: number,
): K[] {
  const unmarked: K[] = [];
  const marked: { key: K; until: number }[] = [];
  for (const [key, entry] of entries) {
    const until = keptUntil(entry.marks, now);
    if (until === 0) unmarked.push(key);
    else marked.push({ key, until });
  }
  return [...unmarked, ...marked.sort((a, b) => a.until - b.until).map((m) => m.key)];
}
