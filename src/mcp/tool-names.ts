/**
 * The names MCP tools are offered under: `mcp__<server>__<tool>`, within what the model API
 * allows (`^[A-Za-z0-9_-]{1,64}$`). Other characters become `_`; a name too long, or equal to
 * one already taken, keeps what fits and ends with a short hash of the tool's own name, so the
 * same server and tools give the same names every session (the cached prompt prefix holds).
 */
import { createHash } from "node:crypto";

export const MAX_TOOL_NAME = 64;

const hashOf = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 8);

/** Code-unit order: the same in every locale. */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The name of `tool` of `server` (a name already checked against SERVER_NAME), unique among
 * `taken`, which it joins. Call in a stable order: on a clash, the later tool gets the hash.
 */
export function mcpToolName(server: string, tool: string, taken: Set<string>): string {
  const prefix = `mcp__${server}__`;
  const clean = tool.replace(/[^A-Za-z0-9_-]/g, "_") || "_";
  let name = `${prefix}${clean}`;
  for (let attempt = 0; name.length > MAX_TOOL_NAME || taken.has(name); attempt++) {
    const suffix = `_${hashOf(attempt === 0 ? tool : `${tool}\0${attempt}`)}`;
    name = `${prefix}${clean.slice(0, Math.max(0, MAX_TOOL_NAME - prefix.length - suffix.length))}${suffix}`;
  }
  taken.add(name);
  return name;
}
