/**
 * Generates `generated/manifest-validator.js`: the manifest schema compiled ahead of time by ajv,
 * so writing the first manifest of a process does not pay ~60 ms for ajv. Regenerate after
 * changing manifest-schema.ts:
 *   bun src/prompt/manifest-validator-build.ts
 * test/prompt/manifest-validator.test.ts fails when the committed file is out of date.
 */
import { fileURLToPath } from "node:url";
import { generateStandaloneValidator } from "../schema/standalone-validator.ts";
import { manifestJsonSchema } from "./manifest-json-schema.ts";

export const GENERATED_MANIFEST_VALIDATOR = fileURLToPath(new URL("./generated/manifest-validator.js", import.meta.url));

export function generateManifestValidatorSource(): Promise<string> {
  return generateStandaloneValidator(manifestJsonSchema(), "src/prompt/manifest-validator-build.ts", "src/prompt/manifest-schema.ts");
}

if (import.meta.main) {
  await Bun.write(GENERATED_MANIFEST_VALIDATOR, await generateManifestValidatorSource());
  process.stdout.write(`wrote ${GENERATED_MANIFEST_VALIDATOR}\n`);
}
