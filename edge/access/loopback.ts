// Which hosts and origins are this machine's own. Without API keys the edge serves only requests
// addressed to a loopback name, and browsers only from loopback pages, so a web page the user
// opens (or a rebinding DNS name) cannot drive a keyless local server (docs/contract.md, "Access").

/** True for `localhost` (and `*.localhost`), 127.0.0.0/8 and ::1. */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (name === "[::1]" || name === "::1") return true;
  const octets = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(name);
  return octets !== null && Number(octets[1]) === 127 && octets.slice(2).every((part) => Number(part) <= 255);
}

/** True for an `Origin` header naming an http(s) page on a loopback host. */
export function isLoopbackOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // includes the opaque origin "null" (file: pages, sandboxed frames)
  }
  return (url.protocol === "http:" || url.protocol === "https:") && isLoopbackHostname(url.hostname);
}
