/**
 * OpenAI strict function schemas require every property to be listed in `required` and
 * `additionalProperties: false`; optional parameters are expressed as nullable. Tools write their
 * schemas with optional parameters nullable and not required (the lenient form ajv validates), and
 * this derives the strict form sent to the model, or reports that strict mode cannot be used.
 */
type Schema = Record<string, unknown>;

// Not in OpenAI's strict subset for strings; ajv still enforces them when a call arrives.
const NOT_STRICT_KEYWORDS = ["minLength", "maxLength"];

function withoutUnsupported(schema: Schema): Schema {
  return Object.fromEntries(Object.entries(schema).filter(([key]) => !NOT_STRICT_KEYWORDS.includes(key)));
}

function allowsNull(schema: Schema): boolean {
  const type = schema.type;
  return type === "null" || (Array.isArray(type) && type.includes("null"));
}

function strictObject(schema: Schema): Schema | undefined {
  if (schema.additionalProperties !== false) return undefined;
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  const out: Record<string, Schema> = {};
  for (const [name, prop] of Object.entries(properties)) {
    if (!required.has(name) && !allowsNull(prop)) return undefined;
    const strictProp = strictValue(prop);
    if (!strictProp) return undefined;
    out[name] = strictProp;
  }
  return { ...schema, properties: out, required: Object.keys(properties) };
}

function strictValue(schema: Schema): Schema | undefined {
  const type = schema.type;
  const isObject = type === "object" || (Array.isArray(type) && type.includes("object"));
  if (isObject) return strictObject(schema);
  if (schema.items && typeof schema.items === "object") {
    const items = strictValue(schema.items as Schema);
    return items ? { ...withoutUnsupported(schema), items } : undefined;
  }
  return withoutUnsupported(schema);
}

/** The strict form of a parameters schema, or the schema as is with `strict: false`. */
export function toStrictParameters(schema: Schema): { parameters: Schema; strict: boolean } {
  const strict = strictObject(schema);
  return strict ? { parameters: strict, strict: true } : { parameters: schema, strict: false };
}
