/**
 * `defineTool`: the one way to make a tool. Parameters are a TypeBox object, so the arguments'
 * type is derived from the schema the model sees (never written twice), and every member is a
 * property checked against that type. The tool states its own facts — kind, the paths a call
 * touches, its working-set priority — and the registry records them on each call's outcome, so
 * memory, approvals and the UI need no table of tool names.
 */
import { Type, type Static, type TObject, type TSchema, type TUnsafe } from "@sinclair/typebox";
import { normalizeWorkspacePath } from "./workspace-path.ts";
import type { Preparation, Tool, ToolContext, ToolKind, ToolLocation, ToolResult } from "./types.ts";

export interface ToolDefinition<P extends TObject> {
  name: string;
  description: string;
  kind: ToolKind;
  parameters: P;
  /** Argument names holding workspace paths: confined by the registry, and by default the call's locations. */
  pathArgs?: readonly (keyof Static<P> & string)[];
  /** The paths a call touches; by default the `pathArgs` values, written when the kind is "write", else read. */
  locations?: (args: Static<P>) => ToolLocation[];
  /** Long outputs enter the working set with this priority (0–1); omit for outputs not worth keeping. */
  workingSetPriority?: number;
  describe: (args: Static<P>) => string;
  prepare?: (args: Static<P>, ctx: ToolContext) => Promise<Preparation>;
  execute: (args: Static<P>, ctx: ToolContext) => Promise<ToolResult>;
}

/** An optional parameter in the lenient form (`type: [T, "null"]`) that strict mode needs; null means "not given". */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T>> {
  const plain = plainSchema(schema);
  return Type.Unsafe<Static<T>>({ ...plain, type: [plain.type, "null"] });
}

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The schema as plain JSON in the key order the model has always seen (`type`, `properties`,
 * `required`, then the rest as written), so moving to TypeBox left the prompt's bytes, and its
 * cached prefix, unchanged. TypeBox's symbol keys are dropped.
 */
export function plainSchema(schema: Schema): Schema {
  const out: Schema = {};
  if ("type" in schema) out.type = schema.type;
  if (isSchema(schema.properties)) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([name, prop]) => [name, isSchema(prop) ? plainSchema(prop) : prop]));
    out.required = Array.isArray(schema.required) ? [...schema.required] : [];
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key in out) continue;
    out[key] = key === "items" && isSchema(value) ? plainSchema(value) : structuredClone(value);
  }
  return out;
}

function pathLocations(pathArgs: readonly string[], access: ToolLocation["access"]): (args: Record<string, unknown>) => ToolLocation[] {
  return (args) =>
    pathArgs.flatMap((name) => {
      const value = args[name];
      return typeof value === "string" && value !== "" ? [{ path: normalizeWorkspacePath(value), access }] : [];
    });
}

export function defineTool<P extends TObject>(definition: ToolDefinition<P>): Tool {
  // The registry validates arguments against this very schema before any member sees them.
  const typed = (args: Record<string, unknown>): Static<P> => args as Static<P>;
  const { prepare, locations } = definition;
  const tool: Tool = {
    name: definition.name,
    description: definition.description,
    kind: definition.kind,
    parameters: plainSchema(definition.parameters),
    locations: locations
      ? (args) => locations(typed(args)).map((l) => ({ ...l, path: normalizeWorkspacePath(l.path) }))
      : pathLocations(definition.pathArgs ?? [], definition.kind === "write" ? "write" : "read"),
    describe: (args) => definition.describe(typed(args)),
    execute: (args, ctx) => definition.execute(typed(args), ctx),
  };
  if (definition.pathArgs !== undefined) tool.pathArgs = definition.pathArgs;
  if (definition.workingSetPriority !== undefined) tool.workingSetPriority = definition.workingSetPriority;
  if (prepare) tool.prepare = (args, ctx) => prepare(typed(args), ctx);
  return tool;
}
