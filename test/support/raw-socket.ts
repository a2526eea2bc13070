// A plain TCP connection to a server's URL, open before anything is sent on it.
import { connect, type Socket } from "node:net";

/** Resolves once the connection to `url`'s host and port is open. */
export function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once("error", reject);
  });
}
