/**
 * Files imported with an import attribute, so `bun build --compile` embeds them in the single
 * executable (docs/adr/0080-package-and-single-binary.md): `with { type: "text" }` gives the
 * file's text, `with { type: "file" }` its path (in node_modules from source, inside the binary
 * when compiled; read it with Bun.file).
 */
declare module "*.md" {
  const value: string;
  export default value;
}

declare module "*.tiktoken" {
  const path: string;
  export default path;
}
