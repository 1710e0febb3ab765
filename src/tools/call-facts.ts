/**
 * What a tool call is, as memory needs it: the tool's kind, the paths the call touches and its
 * working-set priority. Live calls get these from the registry's outcome; a call rebuilt from
 * the transcript (whose records predate these facts) gets them here, from the tool of that name,
 * so no module guesses a tool's facts from its name or argument keys.
 */
import { createDefaultTools } from "./default-tools.ts";
import type { MemoryStore } from "./memory-store.ts";
import type { Tool, ToolKind, ToolLocation } from "./types.ts";

export interface CallFacts {
  kind: ToolKind;
  locations: ToolLocation[];
  workingSetPriority?: number;
}

/** The facts of a call to `tool` that touched nothing (its arguments were invalid). */
export function factsOfTool(tool: Tool): CallFacts {
  const facts: CallFacts = { kind: tool.kind, locations: [] };
  if (tool.workingSetPriority !== undefined) facts.workingSetPriority = tool.workingSetPriority;
  return facts;
}

/** The facts of a call whose arguments are valid for `tool`. */
export function factsOfCall(tool: Tool, args: Record<string, unknown>): CallFacts {
  return { ...factsOfTool(tool), locations: tool.locations?.(args) ?? [] };
}

/** Tools known by name: the default set (made on first use), then tools registries were made with. */
let known: Map<string, Tool> | undefined;
let defaultNames: ReadonlySet<string> = new Set();

function knownTools(): Map<string, Tool> {
  if (known) return known;
  const noStore = (): MemoryStore => {
    throw new Error("tools known for their facts are never run");
  };
  const defaults = createDefaultTools({ settings: { shellTimeoutMs: 120_000 }, memoryStore: noStore });
  defaultNames = new Set(defaults.map((t) => t.name));
  known = new Map(defaults.map((t) => [t.name, t]));
  return known;
}

/** A registry's own tools become known by name (for resume); a default tool's facts are never replaced. */
export function registerToolFacts(tools: readonly Tool[]): void {
  const byName = knownTools();
  for (const tool of tools) if (!defaultNames.has(tool.name)) byName.set(tool.name, tool);
}

/**
 * The facts of a recorded call (name and raw argument JSON), from the tool of that name; undefined
 * for an unknown tool. Arguments that do not parse touch nothing.
 */
export function factsOfRecordedCall(name: string, argumentsJson: string): CallFacts | undefined {
  const tool = knownTools().get(name);
  if (!tool) return undefined;
  let args: unknown;
  try {
    args = JSON.parse(argumentsJson || "{}");
  } catch {
    return factsOfTool(tool);
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return factsOfTool(tool);
  // Recorded arguments were not necessarily valid, so a location function may meet a shape it
  // does not expect; such a call touched nothing.
  try {
    return factsOfCall(tool, Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null)));
  } catch {
    return factsOfTool(tool);
  }
}
