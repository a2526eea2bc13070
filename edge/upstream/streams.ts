// Where a resumable stream lives: the edge names it by the sidecar's own stream id and the public id
// of the sidecar that holds it (`strm_<sidecar's>.<sidecar id>`), so a resume, a poll or a cancel
// from any edge process or isolate reaches that sidecar again (docs/contract.md, "Resumable streams").
import type { Sidecar } from "./connection.js";
import type { SidecarPool } from "./pool.js";

const EDGE_STREAM_ID = /^(strm_[A-Za-z0-9_-]{1,64})\.([0-9a-f]{1,32})$/;

/** The id the client sees: the sidecar's stream id and the sidecar's public id. */
export function edgeStreamId(sidecarStreamId: string, sidecarId: string): string {
  return `${sidecarStreamId}.${sidecarId}`;
}

/** The sidecar holding an edge stream id and its own id for the stream; undefined when none matches. */
export async function locateStream(
  pool: SidecarPool,
  streamId: string,
): Promise<{ client: Sidecar; streamId: string } | undefined> {
  const match = EDGE_STREAM_ID.exec(streamId);
  if (match === null) return undefined;
  const state = await pool.byId(match[2] ?? "");
  return state === undefined ? undefined : { client: state.client, streamId: match[1] ?? "" };
}
