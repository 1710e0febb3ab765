import { describe, expect, test } from "bun:test";
import { callSignature, RepeatedCalls } from "../../src/agent/repeated-calls.ts";

const call = (name: string, args: string, callId = "c") => ({ callId, name, arguments: args });

describe("RepeatedCalls", () => {
  test("the same call is the same whatever the order and spacing of its arguments, or its call id", () => {
    expect(callSignature(call("grep", '{"pattern":"x","path":"src"}', "a"))).toBe(callSignature(call("grep", '{ "path": "src", "pattern": "x" }', "b")));
    expect(callSignature(call("grep", '{"pattern":"x"}'))).not.toBe(callSignature(call("grep", '{"pattern":"y"}')));
    expect(callSignature(call("grep", '{"pattern":"x"}'))).not.toBe(callSignature(call("read_file", '{"pattern":"x"}')));
    // Unparsable arguments compare as sent.
    expect(callSignature(call("edit_file", "{oops"))).toBe(callSignature(call("edit_file", "{oops")));
  });

  test("run, run, refuse; again in a later step: stop; in the same step: refuse", () => {
    const later = new RepeatedCalls();
    const c = call("read_file", '{"path":"a"}');
    expect([later.next(c, 1), later.next(c, 2), later.next(c, 3), later.next(c, 4)].map((v) => v.kind)).toEqual(["run", "run", "refuse", "stop"]);
    const same = new RepeatedCalls();
    expect([same.next(c, 1), same.next(c, 1), same.next(c, 1), same.next(c, 1)].map((v) => v.kind)).toEqual(["run", "run", "refuse", "refuse"]);
  });

  test("another call in between starts the count again", () => {
    const repeats = new RepeatedCalls();
    const test = call("run_shell", '{"command":"npm test"}');
    const edit = call("edit_file", '{"path":"a","old_string":"x","new_string":"y"}');
    const kinds = [test, test, edit, test, test, edit, test].map((c, i) => repeats.next(c, i + 1).kind);
    expect(kinds).toEqual(["run", "run", "run", "run", "run", "run", "run"]);
  });
});
