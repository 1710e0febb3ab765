import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ApprovalDecision } from "../../src/agent/events.ts";
import type { ApprovalMode, ApprovalRequest } from "../../src/tools/approvals.ts";
import { call, makeWorkspace, registryFor, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

function setup(mode: ApprovalMode, answer: (r: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>, interactive = true) {
  const root = makeWorkspace({ "a.txt": "old\n" });
  const asked: ApprovalRequest[] = [];
  const registry = registryFor(root, {
    settings: { approvals: mode, toolOutputTokens: 100_000, shellTimeoutMs: 10_000 },
    interactive,
    ask: async (request) => {
      asked.push(request);
      return answer(request);
    },
  });
  return { root, registry, asked, content: () => readFileSync(join(root, "a.txt"), "utf8") };
}

const editA = { path: "a.txt", old_string: "old", new_string: "new" };

describe("approvals through the registry", () => {
  test("suggest: an edit asks with the diff computed before anything is written", async () => {
    let contentWhileAsked = "";
    const s = setup("suggest", () => {
      contentWhileAsked = readFileSync(join(s.root, "a.txt"), "utf8");
      return { kind: "allow_once" };
    });
    const outcome = await call(s.registry, "edit_file", editA);
    expect(s.asked).toHaveLength(1);
    expect(s.asked[0]?.description).toBe("edit a.txt");
    expect(s.asked[0]?.diff).toBe("--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-old\n+new\n");
    expect(contentWhileAsked).toBe("old\n");
    expect(outcome.denied).toBe(false);
    expect(s.content()).toBe("new\n");
  });

  test("suggest: a denied edit writes nothing and tells the model not to repeat it", async () => {
    const s = setup("suggest", () => ({ kind: "deny", note: "wrong file" }));
    const outcome = await call(s.registry, "edit_file", editA);
    expect(outcome.denied).toBe(true);
    expect(outcome.isError).toBe(true);
    expect(outcome.forModel).toBe(
      'Denied: the user did not approve "edit a.txt" (wrong file). Nothing was done. Do not repeat the same call; ask the user how to proceed or take another approach.',
    );
    expect(outcome.summary).toBe("denied: edit a.txt");
    expect(outcome.diff).toContain("+new");
    expect(s.content()).toBe("old\n");
  });

  test("suggest: shell asks; reads and memory tools never ask", async () => {
    const s = setup("suggest", () => ({ kind: "deny" }));
    expect((await call(s.registry, "run_shell", { command: "touch ran" })).denied).toBe(true);
    expect(existsSync(join(s.root, "ran"))).toBe(false);
    expect(s.asked.map((r) => r.description)).toEqual(["run `touch ran`"]);
    await call(s.registry, "read_file", { path: "a.txt" });
    await call(s.registry, "grep", { pattern: "old" });
    await call(s.registry, "list_files", {});
    const memory = await call(s.registry, "memory_set_now", { now: "testing approvals" });
    expect(memory.isError).toBe(false);
    expect(s.asked).toHaveLength(1);
  });

  test("suggest: allow for this session stops asking for that tool", async () => {
    const s = setup("suggest", () => ({ kind: "allow_session", scope: "tool" }));
    await call(s.registry, "write_file", { path: "b.txt", content: "1\n" });
    await call(s.registry, "write_file", { path: "c.txt", content: "2\n" });
    expect(s.asked).toHaveLength(1);
    expect(readFileSync(join(s.root, "c.txt"), "utf8")).toBe("2\n");
    expect(s.registry.approvals.sessionAllowances()).toEqual(["write_file: every call (except calls with a warning)"]);
  });

  test("auto-edit: writes run without asking, shell still asks", async () => {
    const s = setup("auto-edit", () => ({ kind: "allow_once" }));
    await call(s.registry, "edit_file", editA);
    expect(s.content()).toBe("new\n");
    expect(s.asked).toHaveLength(0);
    const shell = await call(s.registry, "run_shell", { command: "echo hi" });
    expect(shell.forModel).toContain("stdout:\nhi");
    expect(s.asked.map((r) => r.name)).toEqual(["run_shell"]);
  });

  test("full-auto: nothing asks", async () => {
    const s = setup("full-auto", () => ({ kind: "deny" }));
    await call(s.registry, "edit_file", editA);
    const shell = await call(s.registry, "run_shell", { command: "echo hi" });
    expect(shell.denied).toBe(false);
    expect(s.content()).toBe("new\n");
    expect(s.asked).toHaveLength(0);
  });

  test("headless suggest: a write is refused naming --approvals auto-edit, a shell call naming full-auto", async () => {
    const s = setup("suggest", () => ({ kind: "allow_once" }), false);
    const edit = await call(s.registry, "edit_file", editA);
    expect(edit.denied).toBe(true);
    expect(edit.forModel).toMatch(/^Refused: edit_file would change files, .* no terminal to ask \(headless run\)\. Nothing was done\. To allow it, re-run with --approvals auto-edit \(or --yes/);
    expect(edit.summary).toBe("refused (no terminal to ask): edit a.txt");
    const shell = await call(s.registry, "run_shell", { command: "touch ran" });
    expect(shell.forModel).toContain("--approvals full-auto");
    expect(s.asked).toHaveLength(0);
    expect(s.content()).toBe("old\n");
    expect(existsSync(join(s.root, "ran"))).toBe(false);
  });

  test("headless auto-edit: writes pass, shell is refused", async () => {
    const s = setup("auto-edit", () => ({ kind: "allow_once" }), false);
    expect((await call(s.registry, "edit_file", editA)).denied).toBe(false);
    expect((await call(s.registry, "run_shell", { command: "true" })).denied).toBe(true);
  });

  test("an abort while asking denies the call, leaves it pending, and it expires after 3 turns", async () => {
    const controller = new AbortController();
    const s = setup("suggest", () => {
      controller.abort();
      return new Promise<ApprovalDecision>(() => undefined);
    });
    s.registry.approvals.beginTurn(1);
    const outcome = await call(s.registry, "edit_file", editA, controller.signal);
    expect(outcome.denied).toBe(true);
    expect(outcome.forModel).toContain("not answered before the turn was aborted");
    expect(s.content()).toBe("old\n");
    expect(s.registry.approvals.pending().map((p) => p.description)).toEqual(["edit a.txt"]);
    s.registry.approvals.beginTurn(2);
    s.registry.approvals.beginTurn(3);
    expect(s.registry.approvals.beginTurn(4).map((p) => p.description)).toEqual(["edit a.txt"]);
  });

  test("a late approval lets the model's identical retry through without asking again", async () => {
    const controller = new AbortController();
    let first = true;
    const s = setup("suggest", () => {
      if (first) {
        first = false;
        controller.abort();
        return new Promise<ApprovalDecision>(() => undefined);
      }
      return { kind: "deny" };
    });
    s.registry.approvals.beginTurn(1);
    const aborted = await call(s.registry, "edit_file", editA, controller.signal);
    const callId = s.registry.approvals.pending()[0]?.callId ?? "";
    expect(aborted.denied).toBe(true);
    s.registry.approvals.beginTurn(2);
    expect(s.registry.approvals.answer(callId, { kind: "allow_once" })).toBe(true);
    const retried = await call(s.registry, "edit_file", editA);
    expect(retried.denied).toBe(false);
    expect(s.content()).toBe("new\n");
    expect(s.asked).toHaveLength(1);
  });

  test("a file changed between approval and apply is not overwritten", async () => {
    const s = setup("suggest", () => {
      writeFileSync(join(s.root, "a.txt"), "changed by someone\n");
      return { kind: "allow_once" };
    });
    const outcome = await call(s.registry, "edit_file", editA);
    expect(outcome.isError).toBe(true);
    expect(outcome.forModel).toBe("Error: a.txt changed on disk after this change was prepared; nothing was written. Read it again and redo the change.");
    expect(s.content()).toBe("changed by someone\n");
  });
});
