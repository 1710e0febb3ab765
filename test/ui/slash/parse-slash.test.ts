import { describe, expect, test } from "bun:test";
import { parseSlash } from "../../../src/ui/slash/parse-slash.ts";

describe("parseSlash", () => {
  test("name and arguments", () => {
    expect(parseSlash("/manifest 3")).toEqual({ name: "manifest", args: "3" });
    expect(parseSlash("  /goal ship v1  ")).toEqual({ name: "goal", args: "ship v1" });
    expect(parseSlash("/Compact")).toEqual({ name: "compact", args: "" });
  });

  test("paths and plain text are messages, not commands", () => {
    expect(parseSlash("/usr/bin/env is missing")).toBeUndefined();
    expect(parseSlash("hello /help")).toBeUndefined();
  });
});
