/**
 * Checking a server's tool definitions one by one. The SDK's `listTools` validates a whole
 * `tools/list` page at once (and compiles every `outputSchema`), so one bad definition would fail
 * the server; valarmind lists with a lenient result schema instead and checks each tool here. A
 * tool is left out (a notice names it and why) when it is not an MCP tool definition, its
 * `inputSchema` is not an object schema, or its input or output schema is not valid JSON Schema
 * (a draft-04/06 schema is rewritten as draft 2020-12 first: `migratedSchema`):
 * the input schema becomes the function's parameters, and the API answers a request whose
 * parameters are no valid JSON Schema with 400 (`invalid_function_parameters`) — every request,
 * so every turn of the session would fail.
 */
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import { draft2020 as migrateToDraft2020 } from "json-schema-migrate";
import { PaginatedResultSchema, ResultSchema, ToolSchema } from "@modelcontextprotocol/sdk/types.js";
import { modelParameters, type ListedTool } from "./mcp-tool.ts";

/**
 * A `tools/list` page checked only as a paginated result (a loose object: `tools` comes through as
 * sent); its tools are checked one by one by `checkTool`. (No zod of valarmind's own: it is not a
 * runtime dependency.)
 */
export const LenientListToolsResultSchema = PaginatedResultSchema;

/**
 * A `tools/call` answer taken as any result object: the SDK's own schema rejects the whole answer
 * for one content block it does not know (a new block type, an image without mimeType), and the
 * text blocks beside it would be lost. `toolResultOf` reads what it can of each block.
 */
export const LenientCallToolResultSchema = ResultSchema;

/** The `tools` of a page checked by LenientListToolsResultSchema. */
export function pageTools(page: Record<string, unknown>): unknown[] {
  if (!Array.isArray(page.tools)) throw new Error("its tools/list answer has no tools array");
  return page.tools as unknown[];
}

export type CheckedTool = { ok: true; tool: ListedTool } | { ok: false; name: string; problem: string };

type SchemaChecker = { validateSchema(schema: object): boolean | Promise<unknown>; errors?: Array<{ instancePath: string; message?: string | undefined }> | null | undefined };

let checkers: { draft2020: SchemaChecker; draft7: SchemaChecker } | undefined;

/** Meta-schema checks only: nothing is compiled, formats are not checked, nothing is logged. */
function schemaCheckers(): { draft2020: SchemaChecker; draft7: SchemaChecker } {
  const options = { strict: false, validateFormats: false, logger: false } as const;
  checkers ??= { draft2020: new Ajv2020(options), draft7: new Ajv(options) };
  return checkers;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function cut(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * Why `schema` is not valid JSON Schema, or undefined when it is. Draft 2020-12 (MCP's dialect)
 * first; a schema written for draft-07 (tuple `items`, `definitions`) passes too. `$schema` and
 * `$id` are left out, as they are from what the model gets.
 */
export function schemaProblem(schema: Record<string, unknown>): string | undefined {
  const { $schema: _dialect, $id: _id, ...rest } = schema;
  const { draft2020, draft7 } = schemaCheckers();
  try {
    if (draft2020.validateSchema(rest) === true) return undefined;
    const first = draft2020.errors?.[0];
    if (draft7.validateSchema(rest) === true) return undefined;
    return first ? cut(`${first.instancePath === "" ? "/" : first.instancePath} ${first.message ?? "is invalid"}`, 160) : "it does not match the JSON Schema meta-schema";
  } catch (error) {
    return cut(error instanceof Error ? error.message : String(error), 160);
  }
}

/**
 * `schema` written for draft-04 or draft-06 (`exclusiveMinimum: true` beside `minimum`, `id`,
 * `dependencies`), rewritten as draft 2020-12 by json-schema-migrate (the Ajv project's own
 * migration), or undefined when the rewrite fails or is still not valid. Older MCP servers and
 * schema generators still write these; the API takes only the newer dialect.
 */
export function migratedSchema(schema: Record<string, unknown>): Record<string, unknown> | undefined {
  try {
    const copy = structuredClone(schema);
    migrateToDraft2020(copy);
    const { $schema: _dialect, ...migrated } = copy;
    return schemaProblem(migrated) === undefined ? migrated : undefined;
  } catch {
    return undefined;
  }
}

/** How a tool's name appears in a notice: quoted, on one line, not too long. */
export function shownName(name: string): string {
  return JSON.stringify(name.length > 64 ? `${name.slice(0, 63)}…` : name);
}

/** One entry of a `tools/list` answer, checked on its own. */
export function checkTool(raw: unknown): CheckedTool {
  if (!isRecord(raw) || typeof raw.name !== "string") return { ok: false, name: "(no name)", problem: "not a tool definition (it has no name)" };
  const name = raw.name;
  const input = raw.inputSchema;
  if (!isRecord(input)) return { ok: false, name, problem: "it has no inputSchema object" };
  if (input.type !== "object") return { ok: false, name, problem: `its inputSchema is not an object schema (type ${cut(JSON.stringify(input.type) ?? "missing", 40)})` };
  const parsed = ToolSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    return { ok: false, name, problem: `its definition does not follow MCP's tool schema (${cut(`${where}${issue?.message ?? "invalid"}`, 160)})` };
  }
  let inputSchema = input;
  const inputProblem = schemaProblem(modelParameters(input));
  if (inputProblem !== undefined) {
    const migrated = migratedSchema(input);
    if (migrated === undefined || migrated.type !== "object") return { ok: false, name, problem: `its inputSchema is not valid JSON Schema: ${inputProblem}` };
    inputSchema = migrated;
  }
  if (isRecord(raw.outputSchema)) {
    const outputProblem = schemaProblem(raw.outputSchema);
    if (outputProblem !== undefined && migratedSchema(raw.outputSchema) === undefined) return { ok: false, name, problem: `its outputSchema is not valid JSON Schema: ${outputProblem}` };
  }
  const { title, description } = parsed.data;
  return { ok: true, tool: { name, title, description, inputSchema } };
}
