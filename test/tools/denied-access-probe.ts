/**
 * Run as a child process by file-access.test.ts, as a user the file system can refuse (root has
 * its DAC-override capabilities dropped first): calls the file tools on the workspace in argv[2]
 * and prints `{ name: { forModel, summary, isError } }` as JSON on stdout.
 */
import { call, registryFor } from "./temp-workspace.ts";

const root = process.argv[2];
if (root === undefined) throw new Error("usage: bun denied-access-probe.ts <workspace>");
const registry = registryFor(root, { grep: { forceFallback: true } });

const calls: Record<string, [string, Record<string, unknown>]> = {
  readDenied: ["read_file", { path: "secret.txt" }],
  readMissing: ["read_file", { path: "missing.txt" }],
  readViaLink: ["read_file", { path: "link" }],
  listDenied: ["list_files", { path: "locked" }],
  listBehindDenied: ["list_files", { path: "locked/inner" }],
  listMissing: ["list_files", { path: "nowhere" }],
  grepDenied: ["grep", { pattern: "x", path: "secret.txt" }],
  grepMissing: ["grep", { pattern: "x", path: "nowhere" }],
  writeDenied: ["write_file", { path: "secret.txt", content: "new\n" }],
};

const outcomes: Record<string, { forModel: string; summary: string; isError: boolean }> = {};
for (const [name, [tool, args]] of Object.entries(calls)) {
  const outcome = await call(registry, tool, args);
  outcomes[name] = { forModel: outcome.forModel, summary: outcome.summary, isError: outcome.isError };
}
process.stdout.write(JSON.stringify(outcomes));
