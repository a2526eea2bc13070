/**
 * `npx tsx bench/profile-summary.ts <file.cpuprofile>…`: where a V8 CPU profile (written by
 * `npm run bench -- --profile`) spends its time — self time by package / project folder, and the
 * top functions.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** node_modules/<pkg> or the project folder (edge/, sidecar/, …) a script belongs to. */
function area(url: string, fn: string): string {
  if (url === "") return fn === "(garbage collector)" || fn === "(idle)" || fn === "(program)" ? fn : "(native)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1] !== undefined) return pkg[1];
  if (url.startsWith("node:")) return "node: built-ins";
  const project = /\/(edge|sidecar|bench|proto|scripts|test)\//.exec(url);
  return project?.[1] !== undefined ? `${project[1]}/` : url;
}

export function summarize(file: string, top = 15): string {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === "(idle)")
    .reduce((a, [, t]) => a + t, 0);
  const busy = total - idle;
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  for (const [id, t] of self) {
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === "(idle)") continue;
    const a = area(node.callFrame.url, node.callFrame.functionName);
    areas.set(a, (areas.get(a) ?? 0) + t);
    const name =
      `${node.callFrame.functionName || "(anonymous)"} ` +
      `${basename(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
    fns.set(name, (fns.get(name) ?? 0) + t);
  }
  const pct = (t: number): string => `${((t / busy) * 100).toFixed(1)}%`;
  const ms = (t: number): string => `${(t / 1000).toFixed(0)} ms`;
  const lines = [
    `${basename(file)}: ${ms(total)} profiled, ${ms(busy)} busy (${((busy / total) * 100).toFixed(0)}%)`,
    "  self time by area:",
  ];
  for (const [a, t] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, top))
    lines.push(`    ${pct(t).padStart(6)}  ${ms(t).padStart(8)}  ${a}`);
  lines.push("  top functions (self):");
  for (const [f, t] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, top))
    lines.push(`    ${pct(t).padStart(6)}  ${ms(t).padStart(8)}  ${f}`);
  return lines.join("\n");
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: npx tsx bench/profile-summary.ts <file.cpuprofile>…");
  process.exit(1);
}
for (const file of files) console.log(`${summarize(file)}\n`);
