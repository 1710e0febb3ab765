/**
 * Processes ended mid-turn. SIGTERM and SIGHUP end the turn like Ctrl+C (exit 143 / 129; the
 * partial answer and the interruption recorded). SIGKILL at random points of a turn, 50 times in
 * 5 parallel chains: every later `--continue` works, and a message that reached the transcript
 * (its turn_start was printed) is still in one. Kill points are events seen on --json stdout or
 * gates in the fake server, never timers. The PRNG seed is printed so a failure can be replayed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { cleanupTempDirs, readUntil } from "../support/cli.ts";
import { gatedAfter, lastUserText, startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, latestRecords, spawnChat } from "../agent/support/cli-chat.ts";
import { allUserMessages } from "./support/transcripts.ts";

afterAll(cleanupTempDirs);

async function echoWorkspace(): Promise<{ root: string; server: FakeResponsesServer }> {
  const server = startFakeResponsesServer();
  server.setResponder((body) => textStream(`echo: ${lastUserText(body)}`));
  const root = await makeGitWorkspace({ "README.md": "# demo\n" });
  const first = await chat(["-p", "start"], { cwd: root, server });
  if (first.code !== 0) throw new Error(`first turn failed: ${first.stderr}`);
  return { root, server };
}

describe("SIGTERM and SIGHUP mid-turn", () => {
  for (const [signal, code] of [["SIGTERM", 143], ["SIGHUP", 129]] as const) {
    test(`${signal}: exit ${code}, the partial answer and the interruption in the transcript, then --continue works`, async () => {
      const { root, server } = await echoWorkspace();
      const { response, gate } = gatedAfter(textStream("partial words then more"), 6);
      server.enqueue(response);
      const child = spawnChat(["--continue", "-p", "long answer please", "--json"], { cwd: root, server });
      await readUntil(child.stdout, (text) => text.includes('"delta":" words"'));
      child.kill(signal);
      expect(await child.exited).toBe(code);
      gate.release();
      const turn = latestRecords(root).filter((r) => "turn" in r && r.turn === 2);
      expect(turn.map((r) => r.kind)).toContain("user");
      expect(turn.find((r) => r.kind === "assistant")).toMatchObject({ text: "partial words" });
      expect(turn.at(-1)).toMatchObject({ kind: "turn_end", stop_reason: "aborted" });
      const after = await chat(["--continue", "-p", "go on"], { cwd: root, server });
      expect(after.code).toBe(0);
      expect(after.stdout).toBe("echo: go on\n");
      await server.close();
    });
  }
});

/** mulberry32: a small seeded PRNG, so a failing run can be replayed with its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type KillPoint = "at_spawn" | "session_start" | "turn_start" | "mid_stream" | "turn_end";
const KILL_POINTS: KillPoint[] = ["at_spawn", "session_start", "turn_start", "mid_stream", "turn_end"];

interface KillOutcome {
  point: KillPoint;
  message: string;
  /** Its turn_start was printed: the message was on disk before the kill. */
  saved: boolean;
}

async function killOnce(root: string, server: FakeResponsesServer, point: KillPoint, message: string, frame: number): Promise<KillOutcome> {
  const gated = point === "mid_stream" ? gatedAfter(textStream(`a long answer to ${message}`), frame) : undefined;
  if (gated) server.enqueue(gated.response);
  const child = spawnChat(["--continue", "-p", message, "--json"], { cwd: root, server });
  let seen = "";
  const event = { session_start: '"type":"session_start"', turn_start: '"type":"turn_start"', turn_end: '"type":"turn_end"' } as const;
  if (point === "session_start" || point === "turn_start" || point === "turn_end") {
    seen = await readUntil(child.stdout, (text) => text.includes(event[point]));
  } else if (gated) {
    await gated.gate.reached;
  }
  child.kill("SIGKILL");
  await child.exited;
  gated?.gate.release();
  return { point, message, saved: point === "mid_stream" || seen.includes(event.turn_start) };
}

test("SIGKILL at 50 random points of a turn (5 chains in parallel): each later --continue works, no saved message lost", async () => {
  const seed = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);
  console.log(`SIGKILL fault seed: ${seed} (replay: FAULT_SEED=${seed} bun test test/faults/kill-signals.test.ts)`);
  const chains = await Promise.all(
    Array.from({ length: 5 }, async (_, chain) => {
      const random = prng(seed + chain);
      const { root, server } = await echoWorkspace();
      const outcomes: KillOutcome[] = [];
      for (let i = 0; i < 10; i++) {
        const point = KILL_POINTS[Math.floor(random() * KILL_POINTS.length)] ?? "turn_start";
        const frame = 1 + Math.floor(random() * 6);
        const outcome = await killOnce(root, server, point, `killed ${chain}.${i} at ${point}`, frame);
        outcomes.push(outcome);
        const check = await chat(["--continue", "-p", `check ${chain}.${i}`], { cwd: root, server });
        expect({ after: outcome, code: check.code, stderr: check.stderr }).toMatchObject({ code: 0 });
        expect(check.stderr).not.toMatch(/^\s+at /m);
        expect(check.stdout).toBe(`echo: check ${chain}.${i}\n`);
      }
      const stored = allUserMessages(root);
      for (const outcome of outcomes.filter((o) => o.saved)) expect(stored).toContain(outcome.message);
      await server.close();
      return outcomes;
    }),
  );
  const points = chains.flat().map((o) => o.point);
  expect(points).toHaveLength(50);
}, 120_000);
