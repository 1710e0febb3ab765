/** How a failure reaches the user (src/cli/report-failure.ts): named, no stack for a known error, nothing that acts on the terminal. */
import { afterEach, describe, expect, test } from "bun:test";
import { reportFailure } from "../../src/cli/report-failure.ts";
import { UsageError, ValarmindError } from "../../src/errors.ts";

const realWrite = process.stderr.write.bind(process.stderr);
let written = "";
function capture(): void {
  written = "";
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
    return true;
  }) as typeof process.stderr.write;
}
afterEach(() => {
  process.stderr.write = realWrite;
});

describe("reportFailure", () => {
  test("a message quoting a hostile path or setting is printed inert, with its hint and exit code", () => {
    capture();
    const code = reportFailure(new UsageError("no such file 'src/\u001b]0;pwned\u0007a\u001b[2J.ts'", { hint: "check \u202Eevil.ts" }));
    expect(code).toBe(2);
    expect(written).toBe("valarmind: no such file 'src/a.ts'\n  check <U+202E>evil.ts\n");
  });

  test("an unexpected error keeps its stack (a bug to report), cleaned the same way", () => {
    capture();
    const code = reportFailure(new Error("boom \u001b[8mhidden"));
    expect(code).toBe(1);
    expect(written).toStartWith("valarmind: unexpected error: Error: boom hidden\n");
    expect(written).not.toContain("\u001b");
    capture();
    expect(reportFailure(new ValarmindError("plain"))).toBe(1);
    expect(written).toBe("valarmind: plain\n");
  });
});
