/**
 * Parses and validates a tool call's JSON argument string against the tool's schema (ajv, draft
 * 2020-12). A failure becomes a message the model can act on: which field, what was expected,
 * what it sent.
 */
import type { ErrorObject, ValidateFunction } from "ajv";
import { describeError } from "../errors.ts";

export type ParsedArguments = { ok: true; args: Record<string, unknown> } | { ok: false; message: string };

type AjvInstance = { compile(schema: Record<string, unknown>): ValidateFunction };

let ajvPromise: Promise<AjvInstance> | undefined;
const compiled = new WeakMap<Record<string, unknown>, ValidateFunction>();

// ajv is imported on the first tool call, not at startup.
function loadAjv(): Promise<AjvInstance> {
  ajvPromise ??= import("ajv/dist/2020.js").then(({ default: Ajv2020 }) => new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }));
  return ajvPromise;
}

async function validatorFor(schema: Record<string, unknown>): Promise<ValidateFunction> {
  const hit = compiled.get(schema);
  if (hit) return hit;
  const validate = (await loadAjv()).compile(schema);
  compiled.set(schema, validate);
  return validate;
}

function field(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required") return `"${String(params.missingProperty)}"`;
  const path = error.instancePath.replace(/^\//, "").replaceAll("/", ".");
  return path === "" ? "the arguments object" : `"${path}"`;
}

function valueAt(args: unknown, pointer: string): unknown {
  let at: unknown = args;
  for (const part of pointer.split("/").slice(1)) {
    if (typeof at !== "object" || at === null) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** At most 80 characters of a value as JSON, however large or deep it is (a model's arguments are anything). */
function preview(value: unknown): string {
  const text = boundedJson(value, 81, 0);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** JSON of `value`, stopped once `room` characters are written or 32 levels deep. */
function boundedJson(value: unknown, room: number, depth: number): string {
  if (typeof value === "string") return JSON.stringify(value.length > room ? value.slice(0, room) : value);
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? String(value);
  if (depth >= 32) return Array.isArray(value) ? "[…]" : "{…}";
  const entries = Array.isArray(value) ? value.map((item): [string | undefined, unknown] => [undefined, item]) : Object.entries(value);
  let out = Array.isArray(value) ? "[" : "{";
  for (const [index, [key, item]] of entries.entries()) {
    if (out.length >= room) return `${out}…`;
    out += `${index > 0 ? "," : ""}${key === undefined ? "" : `${JSON.stringify(key)}:`}${boundedJson(item, room - out.length, depth + 1)}`;
  }
  return `${out}${Array.isArray(value) ? "]" : "}"}`;
}

/** Problems listed to the model at most; a call with 12,000 unknown fields is told the first ones and the count. */
const MAX_PROBLEMS = 10;

function describeSchemaError(error: ErrorObject, args: unknown): string {
  const params = error.params as Record<string, unknown>;
  // Only the messages that show it compute it: one preview per error made 12,000 errors quadratic.
  const got = () => ` (got ${preview(valueAt(args, error.instancePath))})`;
  switch (error.keyword) {
    case "required":
      return `${field(error)} is required but missing`;
    case "additionalProperties":
      return `"${String(params.additionalProperty)}" is not a parameter of this tool`;
    case "type":
      return `${field(error)} must be ${String(params.type).replace(",", " or ")}${got()}`;
    case "enum":
      return `${field(error)} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}${got()}`;
    case "minimum":
    case "maximum":
      return `${field(error)} must be ${error.keyword === "minimum" ? ">=" : "<="} ${String(params.limit)}${got()}`;
    case "minLength":
      return `${field(error)} must not be empty`;
    default:
      return `${field(error)} ${error.message ?? error.keyword}${got()}`;
  }
}

/** "path (string, required), start_line (integer or null)" — the parameter list, for error messages. */
export function describeParameters(schema: Record<string, unknown>): string {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties)
    .map(([name, prop]) => {
      const type = Array.isArray(prop.type) ? prop.type.join(" or ") : String(prop.type ?? "any");
      return `${name} (${prop.enum ? (prop.enum as unknown[]).map((v) => JSON.stringify(v)).join("|") : type}${required.has(name) ? ", required" : ""})`;
    })
    .join(", ");
}

/** Top-level nulls mean "not given" (strict mode makes the model send every field). */
function dropNulls(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
}

export async function parseArguments(toolName: string, schema: Record<string, unknown>, json: string): Promise<ParsedArguments> {
  const retry = `Fix the arguments and call ${toolName} again. Parameters: ${describeParameters(schema)}.`;
  let parsed: unknown;
  try {
    parsed = json.trim() === "" ? {} : JSON.parse(json);
  } catch (error) {
    const reason = describeError(error);
    return { ok: false, message: `Invalid arguments for ${toolName}: not valid JSON (${reason}); received ${preview(json)}. ${retry}` };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { ok: false, message: `Invalid arguments for ${toolName}: expected a JSON object, received ${preview(parsed)}. ${retry}` };
  }
  const validate = await validatorFor(schema);
  if (!validate(parsed)) {
    const errors = validate.errors ?? [];
    const problems = [...new Set(errors.slice(0, MAX_PROBLEMS * 4).map((e) => describeSchemaError(e, parsed)))].slice(0, MAX_PROBLEMS);
    const more = problems.length === MAX_PROBLEMS && errors.length > MAX_PROBLEMS ? ` (${errors.length} problems in all; the first ${MAX_PROBLEMS} shown)` : "";
    return { ok: false, message: `Invalid arguments for ${toolName}: ${problems.join("; ")}${more}. ${retry}` };
  }
  return { ok: true, args: dropNulls(parsed as Record<string, unknown>) };
}
