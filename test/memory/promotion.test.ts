/**
 * Promotion: when the window folds, the summary request sees the working state and the
 * promotion rules; the `<promote>` lines of its answer change state.json (finished tasks closed,
 * settled decisions recorded, new tasks opened), without duplicates, and are reported.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parsePromotions, promotionOp } from "../../src/memory/promotion.ts";
import { emptyState } from "../../src/state/schema.ts";
import * as ops from "../../src/state/ops.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import { lastUserText, startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace, openAgent, runTurn } from "../agent/support/agent-harness.ts";
import { isFoldRequest } from "../agent/support/cost-model.ts";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

describe("parsePromotions", () => {
  test("splits the summary from its promote block and reads each kind of line", () => {
    const reply = "T1 user asked for X\nT2 done\n<promote>\n- done t-2\ndecision Use SQLite -- one file, no server\ntask Write the migration guide\nnonsense line\n</promote>\n";
    const parsed = parsePromotions(reply);
    expect(parsed.summary).toBe("T1 user asked for X\nT2 done");
    expect(parsed.promotions).toEqual([
      { kind: "done", id: "T-2" },
      { kind: "decision", title: "Use SQLite", why: "one file, no server" },
      { kind: "task", title: "Write the migration guide" },
    ]);
  });

  test("a reply without a block is all summary and promotes nothing", () => {
    expect(parsePromotions("just a summary")).toEqual({ summary: "just a summary", promotions: [] });
  });
});

describe("promotionOp", () => {
  test("skips what the state already has: a done task, a known decision title, a known task title", () => {
    const at = new Date("2026-11-01T00:00:00Z");
    let state = ops.addTask(emptyState(at), "Write docs", {}, at).state;
    state = ops.completeTask(state, "T-1", at).state;
    state = ops.addDecision(state, "Use SQLite", "one file", at).state;
    expect(promotionOp({ kind: "done", id: "T-1" }, state, at)).toBeUndefined();
    expect(promotionOp({ kind: "done", id: "T-9" }, state, at)).toBeUndefined();
    expect(promotionOp({ kind: "decision", title: "use sqlite", why: "x" }, state, at)).toBeUndefined();
    expect(promotionOp({ kind: "task", title: "write docs" }, state, at)).toBeUndefined();
    expect(promotionOp({ kind: "task", title: "New work" }, state, at)).toBeDefined();
  });
});

describe("promotion when the window folds", () => {
  test("the model's promote lines change state.json and are reported as notices", async () => {
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server, { settings: { shortBufferTurns: 20, windowBlockTurns: 4 } });
    await session.state.update((s) => ops.addTask(s, "Add the login form"));
    let summaryBody: Record<string, unknown> | undefined;
    server.setResponder((body) => {
      if (isFoldRequest(body)) {
        summaryBody = body;
        return textStream("T1-4: login form built.\n<promote>\ndone T-1\ndecision Sessions in cookies -- no server state\ntask Add a logout button\n</promote>");
      }
      return textStream(`answer to ${lastUserText(body)}`);
    });
    const notices: string[] = [];
    for (let n = 1; n <= 21; n++) {
      const turn = await runTurn(session, `message ${n}`);
      for (const e of turn.events) if (e.type === "notice") notices.push(e.message);
    }

    expect(summaryBody).toBeDefined();
    expect(JSON.stringify(summaryBody?.input)).toContain("promote");
    // The summary request shows the working state, so the model can name task ids.
    expect(JSON.stringify(summaryBody?.input)).toContain("Add the login form");

    const state = JSON.parse(await readFile(join(root, ".valarmind/memory/state.json"), "utf8"));
    expect(state.tasks_open.find((t: { id: string }) => t.id === "T-1")?.status).toBe("done");
    expect(state.tasks_open.map((t: { title: string }) => t.title)).toContain("Add a logout button");
    expect(state.decisions_recent.map((d: { title: string }) => d.title)).toEqual(["Sessions in cookies"]);
    expect(notices.filter((n) => n.startsWith("promoted to the working state"))).toHaveLength(3);
    // The promote block is not part of the stored summary.
    expect(session.memory.summary?.text).toBe("T1-4: login form built.");
  });
});
