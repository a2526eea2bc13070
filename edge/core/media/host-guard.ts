// Which image URLs the edge may fetch: http(s) only, and not to a private, loopback, link-local, shared or
// metadata address. A Worker cannot resolve a name before fetching it, so the check reads the URL's host as
// written (WHATWG URL parsing has already turned `0x7f.1` or `2130706433` into `127.0.0.1`): an IP literal in
// a reserved range, `localhost` and names under it, and the cloud metadata names are refused; a public name
// that resolves to a private address is not caught here (docs/decisions.md, "Images fetched by the edge").

const BLOCKED_NAMES = new Set(["localhost", "metadata.google.internal", "metadata", "instance-data"]);
const BLOCKED_SUFFIXES = [".localhost", ".internal", ".local", ".home.arpa"];

/** [first address, prefix length] of the IPv4 ranges never fetched. */
const V4_BLOCKED: readonly (readonly [string, number])[] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 3],
];

function v4Number(address: string): number | undefined {
  const parts = address.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

function v4Blocked(address: number): boolean {
  return V4_BLOCKED.some(([first, bits]) => {
    const base = v4Number(first) ?? 0;
    const size = 2 ** (32 - bits);
    return address >= base && address < base + size;
  });
}

/** The 8 groups of an IPv6 literal (URL.hostname's normalised form, without brackets). */
function v6Groups(address: string): number[] | undefined {
  const [head = "", tail] = address.split("::");
  const words = (text: string) => (text === "" ? [] : text.split(":"));
  let left = words(head);
  let right = tail === undefined ? [] : words(tail);
  const last = (tail === undefined ? left : right).at(-1);
  const v4 = last?.includes(".") === true ? v4Number(last) : undefined;
  if (v4 !== undefined) {
    const mapped = [(v4 >>> 16).toString(16), (v4 & 0xffff).toString(16)];
    if (tail === undefined) left = [...left.slice(0, -1), ...mapped];
    else right = [...right.slice(0, -1), ...mapped];
  }
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  if (fill < 0) return undefined;
  const groups = [...left, ...Array<string>(fill).fill("0"), ...right].map((g) => Number.parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

function v6Blocked(groups: readonly number[]): boolean {
  const [a = 0, b = 0, , , , f = 0, g = 0, h = 0] = groups;
  const zeroTo = (n: number) => groups.slice(0, n).every((x) => x === 0);
  if (zeroTo(7) && (h === 0 || h === 1)) return true; // :: and ::1
  if (zeroTo(5) && f === 0xffff) return v4Blocked(g * 65536 + h); // ::ffff:a.b.c.d
  // 64:ff9b::a.b.c.d (NAT64)
  if (a === 0x64 && b === 0xff9b && groups.slice(2, 6).every((x) => x === 0)) return v4Blocked(g * 65536 + h);
  if ((a & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
  if ((a & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((a & 0xff00) === 0xff00) return true; // multicast
  return a === 0x2001 && b === 0xdb8; // documentation
}

/** URL.hostname without IPv6 brackets, lower case, without a trailing dot. */
export function bareHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
}

/** Why the edge must not fetch from `hostname` (URL.hostname), or undefined when it may. */
export function blockedHost(hostname: string): string | undefined {
  const host = bareHost(hostname);
  if (host.includes(":")) {
    const groups = v6Groups(host);
    return groups === undefined || v6Blocked(groups) ? "a private, loopback or link-local address" : undefined;
  }
  const v4 = v4Number(host);
  if (v4 !== undefined) return v4Blocked(v4) ? "a private, loopback or link-local address" : undefined;
  if (BLOCKED_NAMES.has(host) || BLOCKED_SUFFIXES.some((suffix) => host.endsWith(suffix)))
    return "a local or metadata host name";
  return undefined;
}
