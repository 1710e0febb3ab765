import { describe, expect, test } from "bun:test";
import { runRepl } from "../../src/ui/run-repl.ts";
import { answerTurn, FakeController } from "../support/fake-controller.ts";
import { FakeTtyIn, FakeTtyOut, stripAnsi } from "./fixtures/fake-tty.ts";
import { waitUntil } from "./ink-harness.tsx";

const SHOW_CURSOR = "\u001b[?25h";
const PASTE_OFF = "\u001b[?2004l";
const COLOR_SGR = /\u001b\[(3\d|4\d|9\d|10\d)(;\d+)*m/;

function setup(options: ConstructorParameters<typeof FakeController>[0] = {}) {
  const controller = new FakeController(options);
  const stdin = new FakeTtyIn();
  const stdout = new FakeTtyOut(80, 24);
  const stderr = new FakeTtyOut(80, 24);
  let ready = false;
  const start = (extra: Parameters<typeof runRepl>[1] = {}) =>
    runRepl(controller, {
      stdin: stdin as unknown as NodeJS.ReadStream,
      stdout: stdout as unknown as NodeJS.WriteStream,
      stderr: stderr as unknown as NodeJS.WriteStream,
      handleSignals: false,
      onReady: () => {
        ready = true;
      },
      ...extra,
    });
  const screen = () => stripAnsi(stdout.output());
  return { controller, stdin, stdout, start, screen, isReady: () => ready };
}

describe("runRepl", () => {
  test("streams an answer, exits on /exit, restores the terminal and closes the controller", async () => {
    const t = setup({ turns: [answerTurn(1, "Hello from the **model**.")] });
    const done = t.start({ env: {} });
    await waitUntil(() => t.isReady() && t.stdin.isRaw, "raw mode and the first frame", t.screen);
    t.stdin.write("hi\r");
    await waitUntil(() => t.screen().includes("Hello from the model."), "the answer", t.screen);
    t.stdin.write("/exit\r");
    await done;
    expect(t.controller.closed).toBe(true);
    expect(t.stdin.isRaw).toBe(false);
    const out = t.stdout.output();
    expect(out.lastIndexOf(SHOW_CURSOR)).toBeGreaterThan(out.lastIndexOf("\u001b[?25l"));
    expect(out).toContain(PASTE_OFF);
  });

  test("an initial prompt is sent once the REPL is up", async () => {
    const t = setup({ turns: [answerTurn(1, "first answer")] });
    const done = t.start({ initialPrompt: "fix the test", env: {} });
    await waitUntil(() => t.screen().includes("first answer"), "the answer", t.screen);
    expect(t.controller.submitted).toEqual(["fix the test"]);
    t.stdin.write("\u0004");
    await done;
  });

  test("NO_COLOR removes colors but keeps the cursor visible (inverse)", async () => {
    const t = setup({ turns: [answerTurn(1, "# Heading\n\n`code` and a [link](http://x)")] });
    const done = t.start({ env: { NO_COLOR: "1" }, colorLevel: 3 });
    await waitUntil(() => t.isReady() && t.stdin.isRaw, "the first frame", t.screen);
    t.stdin.write("go\r");
    await waitUntil(() => t.screen().includes("link"), "the answer", t.screen);
    t.stdin.write("\u0004");
    await done;
    expect(COLOR_SGR.test(t.stdout.output())).toBe(false);
    expect(t.stdout.output()).toContain("\u001b[7m");
  });

  test("with color, the same answer is colored", async () => {
    const t = setup({ turns: [answerTurn(1, "# Heading")] });
    const done = t.start({ env: {}, colorLevel: 1 });
    await waitUntil(() => t.isReady() && t.stdin.isRaw, "the first frame", t.screen);
    t.stdin.write("go\r");
    await waitUntil(() => t.screen().includes("Heading"), "the answer", t.screen);
    t.stdin.write("\u0004");
    await done;
    expect(COLOR_SGR.test(t.stdout.output())).toBe(true);
  });

  test("a signal ends the REPL and restores the terminal", async () => {
    const t = setup();
    // Other libraries (ink's signal-exit) add and remove their own listeners, so compare sets.
    const before = new Set(process.listeners("SIGTERM"));
    const done = t.start({ env: {}, handleSignals: true });
    await waitUntil(() => t.isReady() && t.stdin.isRaw, "raw mode", t.screen);
    const added = process.listeners("SIGTERM").filter((listener) => !before.has(listener));
    expect(added.length).toBeGreaterThanOrEqual(1);
    process.emit("SIGTERM", "SIGTERM");
    await done;
    expect(t.stdin.isRaw).toBe(false);
    expect(t.controller.closed).toBe(true);
    const left = new Set(process.listeners("SIGTERM"));
    expect(added.filter((listener) => left.has(listener))).toEqual([]);
  });

  test("a UI crash rejects, and still restores the terminal and closes the controller", async () => {
    const t = setup();
    t.controller.commands = () => {
      throw new Error("command table exploded");
    };
    await expect(t.start({ env: {} })).rejects.toThrow("command table exploded");
    expect(t.stdin.isRaw).toBe(false);
    expect(t.controller.closed).toBe(true);
  });

  test("resizing reflows the live area", async () => {
    const t = setup();
    const done = t.start({ env: {} });
    await waitUntil(() => t.isReady(), "the first frame", t.screen);
    t.stdout.resize(40, 24);
    t.stdin.write("a".repeat(60));
    await waitUntil(() => /a{30}/.test(t.screen()), "the typed text", t.screen);
    const lastFrame = stripAnsi(t.stdout.chunks.at(-1) ?? "");
    expect(lastFrame.split("\n").every((line) => line.length <= 40)).toBe(true);
    // Ctrl+C clears the prompt, then twice more exits; all three in one read.
    t.stdin.write("\u0003\u0003\u0003");
    await done;
  });
});
