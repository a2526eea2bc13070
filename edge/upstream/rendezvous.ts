// Rendezvous (highest-random-weight) hashing: every sidecar gets a weight for a key, the key goes
// to the heaviest, and the others follow in weight order (the failover order). A weight depends on
// the key and that sidecar's own name only, so adding a sidecar moves only the keys it now wins
// (about 1/N of them) and removing one moves only its own keys. SHA-256 through Web Crypto: the
// same weights on Node and in workerd, with no state between requests.

const encoder = new TextEncoder();

/** SHA-256 of `text`, as lowercase hex. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The weight of `name` for `key`: the first 48 bits of SHA-256(name NUL key), as a number. */
export async function rendezvousWeight(name: string, key: string): Promise<number> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(`${name}\u0000${key}`)));
  let weight = 0;
  for (let i = 0; i < 6; i++) weight = weight * 256 + (digest[i] ?? 0);
  return weight;
}

/** `items` ordered by their weight for `key`, heaviest first (ties: the smaller name first). */
export async function rendezvousOrder<T>(key: string, items: readonly T[], nameOf: (item: T) => string): Promise<T[]> {
  const weighted = await Promise.all(
    items.map(async (item) => ({ item, name: nameOf(item), weight: await rendezvousWeight(nameOf(item), key) })),
  );
  weighted.sort((a, b) => b.weight - a.weight || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return weighted.map((w) => w.item);
}
