/**
 * The newcomer section's sessions: more agent sessions than sequences, round-robin (sessions.ts), against `npm start`
 * with MODEL= the sessions model and nothing else, and llama-server's default build with the parallel slots of the
 * newcomer's command and a context that holds the sessions' prompts (`-np <sequences> -c <sequences × tokens>`: what a
 * user sets once a long prompt is refused), its prompt cache on as by default. One fresh start of each, this server
 * first; the cold and returning turns' first tokens are what item 2 of the newcomer targets reads.
 */
import { calibrate } from "./prefix.js";
import { grpcClient } from "../clients/grpc.js";
import { startLlamaServer, startOurs } from "../servers.js";
import { runSessionParty, sessionsContextSize, type SessionsOptions, type SessionsResult } from "./sessions.js";

export const NEWCOMER_SESSION_PARTIES = ["this server (npm start)", "llama-server (default build)"] as const;

export async function runNewcomerSessions(
  modelPath: string,
  options: SessionsOptions,
  log: (m: string) => void,
): Promise<SessionsResult> {
  const contextSize = sessionsContextSize(options.tokens, options.turns);
  const result: SessionsResult = { options, contextSize, parties: [] };
  const [ourLabel, peerLabel] = NEWCOMER_SESSION_PARTIES;
  const ours = await startOurs(modelPath);
  let words: number;
  try {
    words = (await calibrate(grpcClient(ours.sidecarUrl ?? ""), options.tokens)).words;
    result.parties.push(await runSessionParty(ourLabel, ours.url, words, options, log));
  } finally {
    await ours.stop();
  }
  const slots = String(options.sequences);
  const peer = await startLlamaServer(modelPath, ["-np", slots, "-c", String(options.sequences * contextSize)]);
  try {
    result.parties.push(await runSessionParty(peerLabel, peer.url, words, options, log));
  } finally {
    await peer.stop();
  }
  return result;
}
