/**
 * An MCP server's tool as a valarmind tool: kind `external` (it asks in every approval mode
 * unless the user's settings allow its server), its input schema passed to the model as the
 * function's parameters (an object schema, not strict, validated by the server), and its result
 * turned into text: text content joined, other content described in one line each, the whole
 * bounded before the registry's usual cut for the model.
 *
 * Built without `defineTool`, whose parameters are TypeBox schemas written in valarmind: these
 * come from the server at run time.
 */
import type { Tool, ToolResult } from "../tools/types.ts";

/** A tool as the server listed it (the fields valarmind uses). */
export interface ListedTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
}

/** One connected server, as its tools reach it. */
export interface McpServerHandle {
  readonly name: string;
  /** The user's config names the server in `mcp.allow`: its tools run without asking. */
  readonly allowed: boolean;
  callTool(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult>;
}

/** Descriptions ride on every request; a server's essay is cut here. */
export const MAX_DESCRIPTION_CHARS = 2048;
/** What one result may keep for the transcript (the model sees `toolOutputTokens` of it). */
export const MAX_RESULT_BYTES = 256 * 1024;
/** Long results enter the working set like a file read or a search. */
const WORKING_SET_PRIORITY = 0.5;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The server's input schema as function parameters: an object schema (anything else becomes one
 * with no properties), without the keys that only identify the schema document.
 */
export function modelParameters(inputSchema: unknown): Record<string, unknown> {
  if (!isRecord(inputSchema) || inputSchema.type !== "object") return { type: "object", properties: {} };
  const { $schema: _dialect, $id: _id, type: _type, properties, ...rest } = structuredClone(inputSchema);
  return { type: "object", properties: isRecord(properties) ? properties : {}, ...rest };
}

function describedTool(server: string, listed: ListedTool): string {
  const text = (listed.description ?? listed.title ?? "").trim();
  if (text === "") return `The ${listed.name} tool of the MCP server "${server}".`;
  return text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : text;
}

function preview(args: Record<string, unknown>, max = 160): string {
  const text = JSON.stringify(args);
  if (text === "{}") return "";
  return ` ${text.length > max ? `${text.slice(0, max - 1)}…` : text}`;
}

const base64Bytes = (data: unknown): number => (typeof data === "string" ? Math.floor((data.replace(/=+$/, "").length * 3) / 4) : 0);

/** One content block as text: text as it is, anything else described (the model gets text only). */
function contentText(block: unknown): string {
  if (!isRecord(block)) return "[content block of unknown shape; not shown]";
  const mime = typeof block.mimeType === "string" ? block.mimeType : "unknown type";
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? block.text : "";
    case "image":
    case "audio":
      return `[${block.type}: ${mime}, ${base64Bytes(block.data)} bytes; not shown, valarmind passes text only]`;
    case "resource_link": {
      const name = typeof block.name === "string" ? block.name : "resource";
      return `[resource link: ${name} <${String(block.uri)}>${typeof block.mimeType === "string" ? `, ${mime}` : ""}]`;
    }
    case "resource": {
      const resource = isRecord(block.resource) ? block.resource : {};
      const uri = String(resource.uri ?? "");
      if (typeof resource.text === "string") return `[resource ${uri}]\n${resource.text}`;
      const type = typeof resource.mimeType === "string" ? resource.mimeType : "unknown type";
      return `[resource ${uri}: ${type}, ${base64Bytes(resource.blob)} bytes of binary data; not shown]`;
    }
    default:
      return `[${String(block.type)} content; not shown]`;
  }
}

/**
 * A result over `MAX_RESULT_BYTES` keeps its first and last halves of that around a marker (as a
 * shell command's output does), so one huge answer cannot fill memory or the transcript.
 */
export function bounded(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= MAX_RESULT_BYTES) return text;
  const half = MAX_RESULT_BYTES / 2;
  const head = bytes.subarray(0, half).toString("utf8").replace(/\uFFFD$/, "");
  const tail = bytes.subarray(bytes.length - half).toString("utf8").replace(/^\uFFFD/, "");
  const cut = bytes.length - Buffer.byteLength(head, "utf8") - Buffer.byteLength(tail, "utf8");
  return `${head}\n[… ${cut} bytes of this result in the middle were not kept …]\n${tail}`;
}

/** The first line of `text`, cut to `max` characters: for a one-line summary. */
export function firstLine(text: string, max = 80): string {
  const first = (text.split("\n", 1)[0] ?? "").slice(0, max + 1);
  return first.length > max ? `${first.slice(0, max - 1)}…` : first;
}

/** A `tools/call` result as the model and the user see it. */
export function toolResultOf(server: string, tool: string, result: unknown): ToolResult {
  const record = isRecord(result) ? result : {};
  const blocks = Array.isArray(record.content) ? record.content : [];
  let text = blocks.map(contentText).join("\n");
  if (text === "" && record.structuredContent !== undefined) text = JSON.stringify(record.structuredContent);
  if (text === "" && record.toolResult !== undefined) text = JSON.stringify(record.toolResult);
  const body = bounded(text === "" ? "(the tool returned no content)" : text);
  const bytes = Buffer.byteLength(body, "utf8");
  if (record.isError === true) {
    return {
      forModel: `Error from the MCP server "${server}" (tool ${tool}): ${body}`,
      summary: `${server}/${tool} failed: ${firstLine(body)}`,
      isError: true,
    };
  }
  return { forModel: body, summary: `${server}/${tool}: ${bytes} bytes`, isError: false };
}

/** The valarmind tool for `listed`, offered as `name` (see tool-names.ts). */
export function createMcpTool(handle: McpServerHandle, listed: ListedTool, name: string): Tool {
  const describe = (args: Record<string, unknown>): string => `mcp ${handle.name}: ${listed.name}${preview(args)}`;
  const execute = (args: Record<string, unknown>, ctx: { signal: AbortSignal }): Promise<ToolResult> => handle.callTool(listed.name, args, ctx.signal);
  return {
    name,
    description: describedTool(handle.name, listed),
    kind: "external",
    parameters: modelParameters(listed.inputSchema),
    foreignSchema: true,
    workingSetPriority: WORKING_SET_PRIORITY,
    describe,
    prepare: async (args, ctx) => ({
      ready: true,
      kind: "external",
      description: describe(args),
      ...(handle.allowed ? { allowedBySettings: true } : {}),
      apply: () => execute(args, ctx),
    }),
    execute,
  };
}
