/**
 * Damage is contained (issue 10, part 2): a damaged line in the middle of a transcript is skipped,
 * kept verbatim in `<transcript>.damaged.jsonl` and told once; an empty transcript is moved aside
 * and the message goes to a fresh session; a torn last line is recovered; `prompt --dry-run` and
 * `sessions show` read all of these; a damaged manifest is skipped by `prompt --list`, and
 * `--show` of it says what is wrong, while the others still show.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, runCli } from "../support/cli.ts";
import { lastUserText, startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, chatEnv, latestRecords, sessions } from "../agent/support/cli-chat.ts";
import { workspacePaths } from "../../src/config/paths.ts";
import { listSessions } from "../../src/session/transcript.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
  root = await makeGitWorkspace({ "README.md": "# demo\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

const noStack = (stderr: string) => expect(stderr).not.toMatch(/^\s+at /m);

async function twoTurns(): Promise<string> {
  expect((await chat(["-p", "one"], { cwd: root, server })).code).toBe(0);
  expect((await chat(["--continue", "-p", "two"], { cwd: root, server })).code).toBe(0);
  const ref = listSessions(workspacePaths(root))[0];
  if (!ref) throw new Error("no session");
  return ref.file;
}

function prompt(args: string[]) {
  return runCli(["prompt", ...args], { cwd: root, env: chatEnv({ server }) });
}

describe("damaged transcripts", () => {
  test("a damaged line in the middle: skipped, kept verbatim in a 0600 side file, told once; --continue and --dry-run go on", async () => {
    const file = await twoTurns();
    const lines = readFileSync(file, "utf8").split("\n");
    const assistantLine = lines.findIndex((l) => l.includes('"kind":"assistant"'));
    lines.splice(assistantLine, 1, '{"v":1,"kind":"assistant","turn":1,"ste', '{"v":1,"kind":"bogus","ts":"x"}');
    writeFileSync(file, lines.join("\n"));

    const dry = await prompt(["--dry-run", "preview"]);
    noStack(dry.stderr);
    expect(dry.code).toBe(0);
    expect(dry.stdout + dry.stderr).toContain("damaged and skipped");

    const shown = await sessions(["show", listSessions(workspacePaths(root))[0]?.id ?? ""], root);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`line ${assistantLine + 1} is damaged and skipped`);

    const first = await chat(["--continue", "-p", "three"], { cwd: root, server });
    noStack(first.stderr);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe("echo: three\n");
    expect(first.stderr).toContain(`lines ${assistantLine + 1}, ${assistantLine + 2} are damaged and skipped`);
    const side = `${file}.damaged.jsonl`;
    expect(statSync(side).mode & 0o777).toBe(0o600);
    const kept = readFileSync(side, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { line: number; text: string });
    expect(kept.map((k) => [k.line, k.text])).toEqual([
      [assistantLine + 1, '{"v":1,"kind":"assistant","turn":1,"ste'],
      [assistantLine + 2, '{"v":1,"kind":"bogus","ts":"x"}'],
    ]);
    const sent = JSON.stringify(server.requests.at(-1)?.body.input);
    for (const text of ["one", "two", "echo: two", "three"]) expect(sent).toContain(text);

    const second = await chat(["--continue", "-p", "four"], { cwd: root, server });
    expect(second.code).toBe(0);
    expect(second.stderr).not.toContain("damaged");
    expect(latestRecords(root).filter((r) => r.kind === "user").map((r) => r.text)).toEqual(["one", "two", "three", "four"]);
  });

  for (const [name, content] of [
    ["an empty transcript (0 bytes)", ""],
    ["a transcript whose header line is damaged", '{"v":1,"kind":"sess\n'],
  ] as const) {
    test(`${name}: told, moved aside (not deleted), the message goes to a fresh session; dry-run previews one`, async () => {
      const file = await twoTurns();
      writeFileSync(file, content);
      const dry = await prompt(["--dry-run", "preview"]);
      noStack(dry.stderr);
      expect(dry.code).toBe(0);
      expect(dry.stdout + dry.stderr).toContain("valarmind cannot continue this session");

      const r = await chat(["--continue", "-p", "still here", "--json"], { cwd: root, server });
      noStack(r.stderr);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('"code":"transcript_damaged"');
      expect(existsSync(file)).toBe(false);
      expect(readFileSync(`${file}.unreadable`, "utf8")).toBe(content);
      const all = listSessions(workspacePaths(root));
      expect(all).toHaveLength(1);
      expect(latestRecords(root).filter((rec) => rec.kind === "user").map((rec) => rec.text)).toEqual(["still here"]);
      const again = await chat(["--continue", "-p", "and again"], { cwd: root, server });
      expect(again.code).toBe(0);
      expect(again.stderr).toBe("");
    });
  }

  test("a torn last line: recovered into a note, the session goes on", async () => {
    const file = await twoTurns();
    writeFileSync(file, `${readFileSync(file, "utf8")}{"v":1,"kind":"user","turn":3,"te`);
    const r = await chat(["--continue", "-p", "three"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("the last line was incomplete");
    expect(latestRecords(root).find((rec) => rec.kind === "note" && rec.what === "torn_line_recovered")).toMatchObject({ text: '{"v":1,"kind":"user","turn":3,"te' });
  });
});

describe("damaged manifests", () => {
  test("prompt --list skips a damaged manifest and says so; --show of it says what is wrong; the others still show", async () => {
    await twoTurns();
    const dir = join(workspacePaths(root).sessionsDir, listSessions(workspacePaths(root))[0]?.id ?? "", "manifests");
    const names = readdirSync(dir).sort();
    expect(names.length).toBeGreaterThanOrEqual(2);
    writeFileSync(join(dir, names[0] ?? ""), "{ not json");

    const list = await prompt(["--list"]);
    noStack(list.stderr);
    expect(list.code).toBe(0);
    expect(list.stderr).toContain(`skipped a damaged manifest: ${join(dir, names[0] ?? "")}`);
    expect(list.stdout).toContain("damaged, skipped");
    expect(list.stdout).toContain(names[1] ?? "?");

    const bad = await prompt(["--show", "1"]);
    noStack(bad.stderr);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("manifest 1 is damaged");
    expect(bad.stderr).toContain("cannot read the manifest");

    const good = await prompt(["--show", "2"]);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain("turn 2");
  });
});
