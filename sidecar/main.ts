// The sidecar process (`npm run sidecar`): launch.ts, then a drain on SIGTERM or SIGINT.
import { usage } from "./config.js";
import { drainOnSignals, launchSidecar } from "./launch.js";

async function main(): Promise<void> {
  if (process.argv.includes("--help")) {
    console.log(usage());
    return;
  }
  const { config, sidecar } = await launchSidecar(process.argv.slice(2), process.env);
  drainOnSignals(config, sidecar);
}

main().catch((error: unknown) => {
  console.error(`sidecar: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
