/**
 * Generates `generated/state-validator.js`: the state schema compiled ahead of time by ajv
 * (standalone code, draft 2020-12, formats), which keeps `valarmind compact` within its 150 ms
 * target. Regenerate after changing schema.ts:
 *   bun src/state/validator-build.ts
 * test/state/validate.test.ts fails when the committed file is out of date.
 */
import { fileURLToPath } from "node:url";
import { generateStandaloneValidator } from "../schema/standalone-validator.ts";
import { stateJsonSchema } from "./schema.ts";

export const GENERATED_VALIDATOR = fileURLToPath(new URL("./generated/state-validator.js", import.meta.url));

export function generateStateValidatorSource(): Promise<string> {
  return generateStandaloneValidator(stateJsonSchema(), "src/state/validator-build.ts", "src/state/schema.ts");
}

if (import.meta.main) {
  await Bun.write(GENERATED_VALIDATOR, await generateStateValidatorSource());
  process.stdout.write(`wrote ${GENERATED_VALIDATOR}\n`);
}
