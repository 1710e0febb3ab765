/**
 * `chat -p` spawned for real against the fake Responses server with a hostile answer: piped, the
 * answer on stdout is byte for byte what the model wrote; the notes on stderr quoting repository
 * data are terminal-safe; on a terminal (a pty from util-linux `script`), nothing printed carries
 * a control sequence.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, chatEnv, jsonEvents } from "../agent/support/cli-chat.ts";
import { BUN_FLAGS, CLI_ENTRY, cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, toolCallStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";

const ANSWER = "The port is \u001b]52;c;ZXZpbA==\u0007\u001b[2J4173 \u001b[8mhidden\u001b[0m \u202eevil 日本 👍";
const MISSING = "missing\u001b]0;pwned\u0007.ts";
/** Anything a terminal could act on (newline and tab aside). */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  root = await makeGitWorkspace({ "src/app.ts": "export const port = 4173;\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

describe("chat -p with a hostile answer", () => {
  test("piped: the answer is byte-exact (ESC and all); the failed tool call's note on stderr is safe", async () => {
    server.enqueue(toolCallStream([{ name: "read_file", arguments: { path: MISSING } }]), textStream(ANSWER));
    const r = await chat(["-p", "which port?"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${ANSWER}\n`);
    expect(r.stderr).toContain("read_file: failed — missing.ts");
    expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  });

  test("stream-json: control characters are JSON escapes; the text parses back exact", async () => {
    server.enqueue(textStream(ANSWER));
    const r = await chat(["-p", "which port?", "--json"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    const end = jsonEvents(r.stdout).find((event) => event.type === "turn_end");
    expect(end?.text).toBe(ANSWER);
  });

  const hasScript = process.platform === "linux" && Bun.which("script") !== null;
  test.skipIf(!hasScript)("on a terminal: what is printed carries no control sequence", async () => {
    server.enqueue(toolCallStream([{ name: "read_file", arguments: { path: MISSING } }]), textStream(ANSWER));
    const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, ...BUN_FLAGS, CLI_ENTRY, "chat", "-p", "which port?"].map(quote).join(" ");
    const env = { ...process.env, NO_COLOR: "1", XDG_CONFIG_HOME: join(await makeTempDir(), "config"), ...chatEnv({ server }) };
    const child = Bun.spawn(["script", "-qefc", command, "/dev/null"], {
      cwd: root,
      env: Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [output, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    expect(code).toBe(0);
    // The pty turns each newline into CRLF; nothing else may be a control.
    const text = output.replace(/\r\n/g, "\n");
    expect(text).toContain("The port is 4173 hidden <U+202E>evil 日本 👍\n");
    expect(text).toContain("read_file: failed");
    expect(text).not.toMatch(UNSAFE);
  });
});
