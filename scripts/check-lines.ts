/**
 * `npm run lint`, after Biome: fails, listing file:line, for any source line over 120 characters.
 * Biome wraps code at 120 but leaves long strings and comments alone, and has no rule for them.
 * The files: those git tracks or would track, by extension; generated and vendored ones and
 * Markdown (prose, tables) are exempt.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const MAX_CHARACTERS = 120;
const CHECKED = /\.(ts|js|json|jsonc|toml|ya?ml)$/;
/** Generated code, vendored upstream files, recorded client requests and npm's lock file. */
const EXEMPT = [/^proto\/gen\//, /^test\/vendor\//, /^test\/fixtures\//, /^package-lock\.json$/];

const root = fileURLToPath(new URL("..", import.meta.url));

/** The files to check, relative to the root: tracked, or new and not ignored. */
function sourceFiles(): string[] {
  const listed = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], {
    cwd: root,
    encoding: "utf8",
  });
  return [...new Set(listed.split("\0"))]
    .filter((file) => CHECKED.test(file) && !EXEMPT.some((pattern) => pattern.test(file)))
    .sort();
}

/** `file:line (N characters)` for each line over the limit, counted in characters, not UTF-16 units. */
function longLines(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(join(root, file), "utf8");
  } catch {
    return []; // deleted in the work tree but still in the index
  }
  return text.split("\n").flatMap((line, i) => {
    const length = [...line].length;
    return length > MAX_CHARACTERS ? [`${file}:${i + 1} (${length} characters)`] : [];
  });
}

const found = sourceFiles().flatMap(longLines);
if (found.length > 0) {
  console.error(
    `${found.length} line(s) over ${MAX_CHARACTERS} characters; wrap them (split strings with +, rewrap comments):`,
  );
  for (const line of found) console.error(`  ${line}`);
  process.exit(1);
}
console.log(`no line over ${MAX_CHARACTERS} characters`);
