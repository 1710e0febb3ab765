import { describe, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { GENERATED_MANIFEST_VALIDATOR, generateManifestValidatorSource } from "../../src/prompt/manifest-validator-build.ts";

describe("the generated manifest validator", () => {
  test("is up to date with manifest-schema.ts (regenerate: bun src/prompt/manifest-validator-build.ts)", async () => {
    expect(await readFile(GENERATED_MANIFEST_VALIDATOR, "utf8")).toBe(await generateManifestValidatorSource());
  });
});
