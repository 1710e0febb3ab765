/**
 * One session, several processes (ADR 0072): a headless `--continue` waits for the other turn,
 * saying so, then continues the same session; past its wait bound it forks to a new session and
 * says so (a notice naming both ids, in --json too); a transcript whose turns were already
 * interleaved by an older valarmind still opens, told once.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { cleanupTempDirs, readUntil } from "../support/cli.ts";
import { gatedAfter, lastUserText, startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, jsonEvents, latestRecords, spawnChat } from "../agent/support/cli-chat.ts";
import { listSessions, readSession } from "../../src/session/transcript.ts";
import { workspacePaths } from "../../src/config/paths.ts";
import { allUserMessages } from "./support/transcripts.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  root = await makeGitWorkspace({ "README.md": "# demo\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

const echo = () => server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));

/** The rest of a stream (readUntil may have read its start). */
async function rest(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
  return text;
}

async function finish(child: ReturnType<typeof spawnChat>) {
  const [stdout, stderr, code] = await Promise.all([rest(child.stdout), rest(child.stderr), child.exited]);
  return { stdout, stderr, code };
}

describe("a session in use by another process", () => {
  test("headless --continue waits with a notice naming the holder's pid, then continues the same session", async () => {
    const { response, gate } = gatedAfter(textStream("first answer"), 4);
    server.enqueue(response);
    echo();
    const holder = spawnChat(["-p", "first"], { cwd: root, server });
    await gate.reached;
    const waiter = spawnChat(["--continue", "-p", "second"], { cwd: root, server });
    const told = await readUntil(waiter.stderr, (text) => text.includes("waiting"));
    expect(told).toContain(`is in use by another valarmind (pid ${holder.pid}`);
    gate.release();
    expect((await finish(holder)).code).toBe(0);
    const second = await finish(waiter);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe("echo: second\n");
    expect(listSessions(workspacePaths(root))).toHaveLength(1);
    expect(latestRecords(root).filter((r) => r.kind === "user").map((r) => [r.turn, r.text])).toEqual([
      [1, "first"],
      [2, "second"],
    ]);
  });

  test("SIGTERM while waiting: exit 143, and the message is saved in a fork (as an aborted turn)", async () => {
    const { response, gate } = gatedAfter(textStream("first answer"), 4);
    server.enqueue(response);
    echo();
    const holder = spawnChat(["-p", "first"], { cwd: root, server });
    await gate.reached;
    const waiter = spawnChat(["--continue", "-p", "patient"], { cwd: root, server });
    await readUntil(waiter.stderr, (text) => text.includes("waiting"));
    waiter.kill("SIGTERM");
    const ended = await finish(waiter);
    expect(ended.code).toBe(143);
    expect(ended.stderr).toContain("this message goes to a new session");
    gate.release();
    expect((await finish(holder)).code).toBe(0);
    expect(allUserMessages(root)).toContain("patient");
    expect((await chat(["--continue", "-p", "later"], { cwd: root, server })).code).toBe(0);
  });

  test("past the wait bound it forks: a notice and --json event name both ids, the fork carries the finished turns, both sessions go on", async () => {
    echo();
    expect((await chat(["-p", "zero"], { cwd: root, server })).code).toBe(0);
    const { response, gate } = gatedAfter(textStream("slow answer"), 4);
    server.enqueue(response);
    const holder = spawnChat(["--continue", "-p", "slow one"], { cwd: root, server });
    await gate.reached;
    const original = listSessions(workspacePaths(root))[0];
    const forked = await chat(["--continue", "-p", "impatient", "--json"], { cwd: root, server, env: { VALARMIND_SESSION_WAIT_MS: "0" } });
    expect(forked.code).toBe(0);
    const events = jsonEvents(forked.stdout);
    const start = events.find((e) => e.type === "session_start");
    const notice = events.find((e) => e.type === "notice" && e.code === "session_forked");
    expect(notice?.message).toContain(`session ${original?.id} is in use by another valarmind (pid ${holder.pid}`);
    expect(notice?.message).toContain(`new session ${String(start?.sessionId)}`);
    gate.release();
    expect((await finish(holder)).code).toBe(0);

    const sessions = listSessions(workspacePaths(root));
    expect(sessions).toHaveLength(2);
    const fork = sessions.find((s) => s.id === start?.sessionId);
    const forkRecords = fork ? readSession(fork.file).records : [];
    expect(forkRecords.filter((r) => r.kind === "user").map((r) => r.text)).toEqual(["zero", "impatient"]);
    expect(forkRecords.find((r) => r.kind === "note" && r.what === "forked_from")).toMatchObject({ text: expect.stringContaining(String(original?.id)) });
    // The fork saw the finished turn of the original, not the one still running there.
    const forkRequest = server.requests.find((r) => lastUserText(r.body) === "impatient");
    const sent = JSON.stringify(forkRequest?.body.input);
    expect(sent).toContain("echo: zero");
    expect(sent).not.toContain("slow one");
    const originalRecords = original ? readSession(original.file).records : [];
    expect(originalRecords.filter((r) => r.kind === "user").map((r) => r.text)).toEqual(["zero", "slow one"]);

    const later = await chat(["--continue", "-p", "later"], { cwd: root, server });
    expect(later.code).toBe(0);
    expect(later.stdout).toBe("echo: later\n");
  });

  test("an old transcript with interleaved turns opens: renumbered, told once, every message kept", async () => {
    echo();
    expect((await chat(["-p", "one"], { cwd: root, server })).code).toBe(0);
    const ref = listSessions(workspacePaths(root))[0];
    if (!ref) throw new Error("no session");
    const ts = new Date().toISOString();
    const line = (record: Record<string, unknown>) => `${JSON.stringify({ v: 1, ts, ...record })}\n`;
    // What two concurrent processes of an older valarmind left behind.
    writeFileSync(
      ref.file,
      readFileSync(ref.file, "utf8") +
        line({ kind: "user", turn: 2, text: "from p" }) +
        line({ kind: "user", turn: 2, text: "from q" }) +
        line({ kind: "assistant", turn: 2, step: 1, text: "P" }) +
        line({ kind: "assistant", turn: 2, step: 1, text: "Q" }) +
        line({ kind: "turn_end", turn: 2, steps: 1, stop_reason: "completed" }) +
        line({ kind: "turn_end", turn: 2, steps: 1, stop_reason: "completed" }),
    );
    const first = await chat(["--continue", "-p", "next"], { cwd: root, server });
    expect(first.stderr).not.toMatch(/^\s+at /m);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain("renumbered when read: turn 2 → 3");
    const sent = JSON.stringify(server.requests.at(-1)?.body.input);
    for (const text of ["from p", "from q", "P", "Q", "next"]) expect(sent).toContain(text);
    const user = latestRecords(root).filter((r) => r.kind === "user").at(-1);
    expect(user).toMatchObject({ turn: 4, text: "next" });

    const second = await chat(["--continue", "-p", "and again"], { cwd: root, server });
    expect(second.code).toBe(0);
    expect(second.stderr).not.toContain("renumbered");
  });
});
