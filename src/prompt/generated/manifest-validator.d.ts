// Types of the generated validator (see src/prompt/manifest-validator-build.ts).
import type { ErrorObject } from "ajv";

export interface StandaloneValidate {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

declare const validate: StandaloneValidate;
export { validate };
export default validate;
