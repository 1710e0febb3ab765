/**
 * Temp workspaces for tool tests: `makeWorkspace({ "src/a.ts": "..." })` writes the files under a
 * fresh directory and returns its real path; `removeWorkspaces()` (in afterAll) deletes them.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createToolRegistry, type ToolRegistry, type ToolRegistryOptions } from "../../src/tools/registry.ts";
import type { ToolCallOutcome } from "../../src/tools/types.ts";

const made: string[] = [];

export function makeWorkspace(files: Record<string, string> = {}): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "valarmind-tools-")));
  made.push(root);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
  return root;
}

/** A directory outside any workspace, for escape tests. */
export function makeOutsideDir(files: Record<string, string> = {}): string {
  return makeWorkspace(files);
}

export function removeWorkspaces(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export const TEST_SETTINGS = { approvals: "full-auto", toolOutputTokens: 100_000, shellTimeoutMs: 10_000 } as const;

export function registryFor(root: string, overrides: Partial<ToolRegistryOptions> = {}): ToolRegistry {
  return createToolRegistry({ root, settings: { ...TEST_SETTINGS }, ...overrides });
}

let counter = 0;

/** Runs one call through the registry with a fresh, unaborted signal. */
export function call(registry: ToolRegistry, name: string, args: unknown, signal = new AbortController().signal): Promise<ToolCallOutcome> {
  counter++;
  return registry.run({ callId: `call_${counter}`, name, arguments: typeof args === "string" ? args : JSON.stringify(args) }, { signal });
}
