/**
 * Custom commands (ADR 0082): `NAME.md` in the user's commands directory, or in a trusted
 * project's `.valarmind/commands/`, is `/NAME [ARGS]`; the model receives the file's text with
 * `$ARGUMENTS` replaced. Untrusted project commands are left out with a notice, a command cannot
 * replace a built-in one, and bad files are notices naming the file. Driven through the real
 * controller and the spawned CLI against the fake Responses server.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadCustomCommands } from "../../src/agent/custom-command-files.ts";
import { expandCustomCommand, parseCommandFile, type CustomCommandSet } from "../../src/agent/custom-commands.ts";
import { builtInCommandNames, helpOutput } from "../../src/agent/slash-catalog.ts";
import { SessionChatController } from "../../src/cli/chat/chat-controller.ts";
import { fakeModel, makeGitWorkspace, testSettings } from "../agent/support/agent-harness.ts";
import { chat } from "../agent/support/cli-chat.ts";
import { cleanupTempDirs, makeTempDir, runCli } from "../support/cli.ts";
import { conversationMessages, startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";

let server: FakeResponsesServer;
let root: string;
let config: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  server.setResponder(() => textStream("done"));
  root = await makeGitWorkspace({ "README.md": "# demo\n" });
  config = await makeTempDir("valarmind-config-");
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

const userDir = () => join(config, "valarmind", "commands");
const projectDir = () => join(root, ".valarmind", "commands");

function write(dir: string, name: string, text: string | Uint8Array): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

function load(trusted: boolean): Promise<CustomCommandSet> {
  return loadCustomCommands({ root, trusted, reserved: builtInCommandNames(), userDir: userDir() });
}

/** The user message of the model request `index`. */
const sentMessage = (index = 0): string => conversationMessages(server.requests[index]?.body ?? {}).findLast((item) => item.role === "user")?.content ?? "";

const REVIEW = "---\ndescription: review a file for bugs\nallowed-tools: read_file\n---\n\nReview $ARGUMENTS for bugs; quote the lines of $ARGUMENTS you mean.\n";

describe("a command file", () => {
  test("front matter gives the description; the text after it is the prompt; $ARGUMENTS is replaced as typed", () => {
    const parsed = parseCommandFile(REVIEW);
    expect(parsed).toEqual({ ok: true, description: "review a file for bugs", body: "Review $ARGUMENTS for bugs; quote the lines of $ARGUMENTS you mean." });
    if (!parsed.ok) return;
    expect(expandCustomCommand(parsed, "src/a.ts")).toBe("Review src/a.ts for bugs; quote the lines of src/a.ts you mean.");
    // `$&` and `$1` in the arguments are not replacement patterns.
    expect(expandCustomCommand(parsed, "a$&b $1")).toBe("Review a$&b $1 for bugs; quote the lines of a$&b $1 you mean.");
  });

  test("without front matter the first line describes it; without $ARGUMENTS the arguments follow the text", () => {
    const parsed = parseCommandFile("# Explain the last failure\r\nRead the test output and explain it.\r\n");
    expect(parsed).toEqual({ ok: true, description: "Explain the last failure", body: "# Explain the last failure\nRead the test output and explain it." });
    if (!parsed.ok) return;
    expect(expandCustomCommand(parsed, "")).toBe(parsed.body);
    expect(expandCustomCommand(parsed, "in ci")).toBe(`${parsed.body}\n\nin ci`);
  });

  test("an unclosed front matter or a file without a prompt is refused with what to do", () => {
    expect(parseCommandFile("---\ndescription: x\nno end")).toEqual({ ok: false, problem: expect.stringContaining("never closed") });
    expect(parseCommandFile("---\ndescription: x\n---\n\n  \n")).toEqual({ ok: false, problem: expect.stringContaining("no prompt text") });
  });
});

describe("loading", () => {
  test("bad names, built-in names, oversized and non-UTF-8 files are notices naming the file; the good ones load", async () => {
    write(userDir(), "review.md", REVIEW);
    const badName = write(userDir(), "Fix_It.md", "fix it");
    const builtIn = write(userDir(), "help.md", "my help");
    const alias = write(userDir(), "q.md", "quick");
    const big = write(userDir(), "big.md", "x".repeat(33 * 1024));
    const binary = write(userDir(), "bin.md", new Uint8Array([0xff, 0xfe, 0x00, 0x41]));
    write(userDir(), "notes.txt", "not a command");
    const set = await load(false);
    expect(set.commands.map((command) => command.name)).toEqual(["review"]);
    const notices = set.notices.join("\n");
    expect(set.notices).toHaveLength(5);
    expect(notices).toContain(`${badName}: 'Fix_It' is not a command name`);
    expect(notices).toContain(`${builtIn}: /help is a built-in command, which a custom command cannot replace; rename the file`);
    expect(notices).toContain(`${alias}: /q is a built-in command`);
    expect(notices).toContain(`${big}: 33 KiB, over the 32 KiB a command file may hold`);
    expect(notices).toContain(`${binary}: not UTF-8 text`);
  });

  test("an untrusted folder's project commands are ignored with one notice; trusted, they load and replace the user's of the same name", async () => {
    write(userDir(), "review.md", REVIEW);
    write(projectDir(), "review.md", "Project review of $ARGUMENTS");
    write(projectDir(), "ship.md", "---\ndescription: ship it\n---\nShip.");
    const untrusted = await load(false);
    expect(untrusted.commands.map((c) => [c.name, c.scope])).toEqual([["review", "user"]]);
    expect(untrusted.untrusted).toEqual(["review", "ship"]);
    expect(untrusted.notices).toEqual([
      "ignoring 2 project command(s) in .valarmind/commands (/review, /ship): this folder is not trusted. If you trust this repository, run 'valarmind trust', or pass --trust for one run.",
    ]);
    const trusted = await load(true);
    expect(trusted.commands.map((c) => [c.name, c.scope, c.description])).toEqual([
      ["review", "project", "Project review of $ARGUMENTS"],
      ["ship", "project", "ship it"],
    ]);
    expect(trusted.notices).toEqual([]);
  });

  test("a project command that is a link out of the workspace is refused, even trusted", async () => {
    const outside = write(await makeTempDir("valarmind-outside-"), "secret.md", "the contents of a private file");
    mkdirSync(projectDir(), { recursive: true });
    symlinkSync(outside, join(projectDir(), "leak.md"));
    write(projectDir(), "ok.md", "fine");
    const set = await load(true);
    expect(set.commands.map((c) => c.name)).toEqual(["ok"]);
    expect(set.notices).toEqual([expect.stringContaining(".valarmind/commands/leak.md: a link to")]);
  });
});

describe("in the REPL's controller", () => {
  async function open(custom: CustomCommandSet) {
    return SessionChatController.open({
      root,
      settings: testSettings(),
      model: fakeModel(server),
      interactive: true,
      resume: { kind: "new" },
      warnings: custom.notices,
      customCommands: custom.commands,
    });
  }

  test("a user command is in commands() and /help, and the model receives its expanded text", async () => {
    write(userDir(), "review.md", REVIEW);
    const controller = await open(await load(false));
    try {
      const entry = controller.commands().find((command) => command.name === "review");
      expect(entry).toEqual({ name: "review", usage: "/review [ARGS]", description: "review a file for bugs (user command)", runs: "prompt" });
      const names = controller.commands().map((command) => command.name);
      expect([...names].sort()).toEqual(names);
      const help = await controller.runCommand("help", "");
      expect(help).toEqual(helpOutput(controller.commands()));
      expect(help.lines.some((line) => line.startsWith("/review [ARGS]") && line.includes("review a file for bugs (user command)"))).toBe(true);
      for await (const _ of controller.submit("/review src/a.ts", new AbortController().signal));
      expect(sentMessage()).toBe("Review src/a.ts for bugs; quote the lines of src/a.ts you mean.");
      // Text that only looks like a command is sent as typed.
      for await (const _ of controller.submit("/reviewer src/a.ts", new AbortController().signal));
      expect(sentMessage(server.requests.length - 1)).toBe("/reviewer src/a.ts");
      expect((await controller.runCommand("review", "x")).isError).toBe(true);
    } finally {
      await controller.close();
    }
  });

  test("a resumed session shows a custom command as typed, not its expanded text", async () => {
    // Was: --continue (and /resume) showed the turn as "Review src/a.ts for bugs; …", text the user never typed.
    write(userDir(), "review.md", REVIEW);
    const custom = await load(false);
    const first = await open(custom);
    try {
      for await (const _ of first.submit("/review src/a.ts", new AbortController().signal));
      for await (const _ of first.submit("thanks", new AbortController().signal));
    } finally {
      await first.close();
    }
    const resumed = await SessionChatController.open({ root, settings: testSettings(), model: fakeModel(server), interactive: true, resume: { kind: "latest" }, warnings: [], customCommands: custom.commands });
    try {
      expect(resumed.earlierConversation().turns.map((turn) => turn.user)).toEqual(["/review src/a.ts", "thanks"]);
      // The model still gets the expanded text in the window.
      for await (const _ of resumed.submit("again", new AbortController().signal));
      expect(server.requests.at(-1)?.raw).toContain("Review src/a.ts for bugs");
    } finally {
      await resumed.close();
    }
  });

  test("an untrusted project command is not offered and its notice is among the warnings", async () => {
    write(projectDir(), "ship.md", "Ship.");
    const controller = await open(await load(false));
    try {
      expect(controller.commands().some((command) => command.name === "ship")).toBe(false);
      expect(controller.status().warnings).toContain(
        "ignoring 1 project command(s) in .valarmind/commands (/ship): this folder is not trusted. If you trust this repository, run 'valarmind trust', or pass --trust for one run.",
      );
    } finally {
      await controller.close();
    }
  });
});

describe("chat -p \"/NAME ARGS\"", () => {
  const env = () => ({ XDG_CONFIG_HOME: config });

  test("a user command is expanded before it is sent", async () => {
    write(userDir(), "review.md", REVIEW);
    const r = await chat(["-p", "/review src/a.ts"], { cwd: root, server, env: env() });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("done\n");
    expect(sentMessage()).toBe("Review src/a.ts for bugs; quote the lines of src/a.ts you mean.");
    // The transcript keeps what was typed beside the expansion, for a resume to show.
    const [listed] = JSON.parse((await runCli(["sessions", "list", "--json"], { cwd: root, env: env() })).stdout) as Array<{ id: string }>;
    const shown = await runCli(["sessions", "show", listed?.id ?? "?"], { cwd: root, env: env() });
    expect(shown.stdout).toContain("— note (typed_as): /review src/a.ts");
  });

  test("-p - reading \"/NAME ARGS\" from standard input expands it as -p \"/NAME ARGS\" does; other piped text is sent as read", async () => {
    // Was: the piped "/review src/a.ts" reached the model as literal text.
    write(userDir(), "review.md", REVIEW);
    const r = await chat(["-p", "-"], { cwd: root, server, env: env(), stdin: "/review src/a.ts\n" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(sentMessage()).toBe("Review src/a.ts for bugs; quote the lines of src/a.ts you mean.");
    const plain = await chat(["-p", "-"], { cwd: root, server, env: env(), stdin: "/usr/bin/env is missing\n" });
    expect(plain.code).toBe(0);
    expect(sentMessage(1)).toBe("/usr/bin/env is missing\n");
  });

  test("a project command is refused in an untrusted folder, used with --trust and once the folder is trusted", async () => {
    write(projectDir(), "ship.md", "Ship $ARGUMENTS now.");
    const refused = await chat(["-p", "/ship v2"], { cwd: root, server, env: env() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("/ship is a project command (.valarmind/commands/ship.md) and this folder is not trusted");
    expect(refused.stderr).toContain("valarmind trust");
    expect(server.requests).toHaveLength(0);

    const once = await chat(["-p", "/ship v2", "--trust"], { cwd: root, server, env: env() });
    expect(once.code).toBe(0);
    expect(sentMessage(0)).toBe("Ship v2 now.");

    expect((await runCli(["trust"], { cwd: root, env: env() })).code).toBe(0);
    const stored = await chat(["-p", "/ship v3"], { cwd: root, server, env: env() });
    expect(stored.code).toBe(0);
    expect(sentMessage(server.requests.length - 1)).toBe("Ship v3 now.");
  });

  test("a built-in command name or plain text is sent as typed", async () => {
    write(userDir(), "review.md", REVIEW);
    const r = await chat(["-p", "/goal ship it"], { cwd: root, server, env: env() });
    expect(r.code).toBe(0);
    expect(sentMessage()).toBe("/goal ship it");
  });
});
