/**
 * The REPL app against the real core (SessionChatController, AgentSession, the OpenAI client)
 * and the fake Responses server over HTTP: what the user types reaches the model, what the model
 * streams reaches the screen, approvals decide what reaches the disk, slash commands change the
 * session and the state.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { workspacePaths } from "../../../src/config/paths.ts";
import { createModelClient, endpointWarning, resolveEndpoint } from "../../../src/model/client-factory.ts";
import { gatedBefore, testSettings } from "../../agent/support/agent-harness.ts";
import { cleanupTempDirs } from "../../support/cli.ts";
import {
  inputItems,
  lastUserText,
  textStream,
  toolCallStream,
  toolOutputsThisTurn,
  type FakeResponse,
} from "../../support/fake-responses-server.ts";
import { isFoldRequest } from "../../agent/support/cost-model.ts";
import { closeRealApps, KEYS, openRealApp, type RealApp } from "./real-app.tsx";

afterEach(closeRealApps);
afterAll(cleanupTempDirs);

const SUM = "export const sum = (a: number, b: number) => a - b;\n";
const FIXED = "export const sum = (a: number, b: number) => a + b;\n";
const EDIT_SUM = toolCallStream([{ name: "edit_file", arguments: { path: "src/sum.ts", old_string: "a - b", new_string: "a + b" } }]);
/** Bounded waits inside fail first, with the last frame. */
const TEST_MS = 20_000;
const STACK_FRAME = /^\s+at .+:\d+/m;

/** Every answer echoes the user's message; summary requests get `summary`. */
function echoServer(h: RealApp, summary = "The user asked; the assistant answered."): void {
  h.server.setResponder((body): FakeResponse => (isFoldRequest(body) ? textStream(summary) : textStream(`answer to ${lastUserText(body)}`)));
}

function goalOnDisk(root: string): unknown {
  const state: unknown = JSON.parse(readFileSync(workspacePaths(root).stateJson, "utf8"));
  return typeof state === "object" && state !== null && "goal" in state ? state.goal : undefined;
}

describe("a turn", () => {
  test("the message reaches the model and the answer renders while it streams", async () => {
    const h = await openRealApp();
    const answer = "## Plan\n\nFirst I read `sum.ts`, then I fix **the sign**.";
    const { response, gate } = gatedBefore(textStream(answer), "response.output_text.done");
    h.server.enqueue(response);

    await h.send("why does sum subtract?");
    await h.see("then I fix the sign.");
    // The model has not finished (the server holds the rest): the text came in as it streamed.
    expect(h.frame()).toContain("working ·");
    expect(h.frame()).toContain("First I read `sum.ts`");
    expect(h.frame()).not.toContain("## Plan");
    expect(lastUserText(h.server.requests[0]?.body ?? {})).toBe("why does sum subtract?");

    gate.release();
    await h.idle();
    expect(h.frame()).toContain("› why does sum subtract?");
    expect(h.frame()).toMatch(/prompt \d+(\.\d)?k\/24k/);
    expect(h.controller.status().sessionTokens).toBeGreaterThan(0);
    expect(h.frame()).toContain(`session ${h.controller.status().sessionTokens}`);
  }, TEST_MS);
});

describe("approvals", () => {
  async function askToEdit(): Promise<RealApp> {
    const h = await openRealApp({ files: { "src/sum.ts": SUM }, settings: { approvals: "suggest" } });
    expect(h.frame()).toContain("· suggest");
    h.server.enqueue(EDIT_SUM, textStream("The sign is fixed."));
    await h.send("fix sum");
    await h.see("Allow edit_file?");
    const frame = h.frame();
    expect(frame).toContain("-export const sum = (a: number, b: number) => a - b;");
    expect(frame).toContain("+export const sum = (a: number, b: number) => a + b;");
    expect(frame).toContain("1. Allow once (y)");
    // The core waits on the answer: nothing was written and no second request went out.
    expect(readFileSync(join(h.root, "src/sum.ts"), "utf8")).toBe(SUM);
    expect(h.server.requests).toHaveLength(1);
    return h;
  }

  test("allow once: the file changes on disk and the model receives the tool output", async () => {
    const h = await askToEdit();
    await h.keys("y");
    await h.see("The sign is fixed.");
    await h.idle();

    expect(readFileSync(join(h.root, "src/sum.ts"), "utf8")).toBe(FIXED);
    expect(h.frame()).toContain("(allowed once)");
    const outputs = toolOutputsThisTurn(h.server.requests[1]?.body ?? {});
    expect(outputs).toHaveLength(1);
    expect(outputs[0]?.output).toContain("Edited src/sum.ts: 1 replacement");
  }, TEST_MS);

  test("deny with a note: the file is unchanged and the note reaches the model", async () => {
    const h = await askToEdit();
    await h.keys("e");
    await h.see("Note to the model");
    await h.keys("keep the minus, rename the function instead", KEYS.enter);
    await h.see("The sign is fixed.");
    await h.idle();

    expect(readFileSync(join(h.root, "src/sum.ts"), "utf8")).toBe(SUM);
    expect(h.frame()).toContain("⊘ edit_file");
    const outputs = toolOutputsThisTurn(h.server.requests[1]?.body ?? {});
    expect(outputs).toHaveLength(1);
    expect(outputs[0]?.output).toContain("Denied");
    expect(outputs[0]?.output).toContain("keep the minus, rename the function instead");
  }, TEST_MS);
});

describe("session approvals on the real session", () => {
  test("p remembers the prefix shown; a later command under it runs, one leaving the workspace asks; /approvals lists it", async () => {
    const h = await openRealApp({ files: { "src/sum.ts": SUM }, settings: { approvals: "suggest" } });
    const shell = (command: string) => toolCallStream([{ name: "run_shell", arguments: { command } }]);
    h.server.enqueue(shell("ls -la src"), shell("ls src"), shell("ls .."), textStream("Listed."));
    await h.send("list the sources");
    await h.see("Allow run_shell?");
    expect(h.frame()).toContain("Allow exactly `ls -la src` for this session (a)");
    expect(h.frame()).toContain("Allow `ls` followed by any arguments for this session (p)");
    await h.keys("p");
    // `ls src` runs without a dialog; `ls ..` reaches outside the workspace and asks again.
    await h.see("run `ls ..`");
    expect(h.frame()).toContain("Allow run_shell?");
    await h.keys("n");
    await h.see("Listed.");
    await h.idle();
    expect(h.server.requests.slice(1, 3).map((r) => (toolOutputsThisTurn(r.body).at(-1)?.output ?? "").includes("sum.ts"))).toEqual([true, true]);
    expect(toolOutputsThisTurn(h.server.requests[3]?.body ?? {}).at(-1)?.output).toContain("Denied");

    await h.send("/approvals");
    await h.see("allowed this session:");
    expect(h.frame()).toContain("allowed this session: run_shell: `ls` followed by any arguments allowed by the prefix rules");
  }, TEST_MS);
});

describe("slash commands on the real session", () => {
  test("/goal writes state.json and the status line shows it", async () => {
    const h = await openRealApp();
    expect(h.frame()).toContain("no goal set");
    await h.send("/goal ship the parser");
    await h.see('goal: (empty) → "ship the parser"');
    await h.idle();
    expect(goalOnDisk(h.root)).toBe("ship the parser");
    const statusLines = h.frame().split("\n").slice(-2);
    expect(statusLines.at(-1)).toBe("goal ship the parser");
  }, TEST_MS);

  test("/manifest shows the last request's manifest as a table", async () => {
    const h = await openRealApp();
    echoServer(h);
    for (const message of ["hello", "tell me about the parser"]) {
      await h.send(message);
      await h.see(`answer to ${message}`);
      await h.idle();
    }
    await h.send("/manifest");
    await h.see("cut to fit:");
    const frame = h.frame();
    const manifests = join(workspacePaths(h.root).sessionsDir, h.controller.status().sessionId, "manifests");
    expect(readdirSync(manifests).sort()).toEqual(["0001-01.json", "0002-01.json"]);
    expect(frame).toContain("── /manifest manifest 2");
    expect(frame).toContain(`valarmind prompt · 2/2\n${join(manifests, "0002-01.json")}`);
    expect(frame).toContain("turn 2 · step 1");
    expect(frame).toMatch(/region\s+item\s+tokens\s+share\s+cache\s+why/);
    expect(frame).toMatch(/core\s+core rules/);
    expect(frame).toMatch(/task\s+the user's message\s+\d+\s+[\d.]+%\s+volatile\s+the user's message for turn 2/);
  }, TEST_MS);

  test("/window lists the turns the sliding window holds", async () => {
    const h = await openRealApp();
    echoServer(h);
    for (const message of ["first question", "second question"]) {
      await h.send(message);
      await h.see(`answer to ${message}`);
      await h.idle();
    }
    await h.send("/window");
    await h.see("working set:");
    const frame = h.frame();
    expect(frame).toContain("2/20 turns");
    expect(frame).toContain("turn 1: first question");
    expect(frame).toContain("turn 2: second question");
  }, TEST_MS);

  test("/compact folds the window and shows the tokens before and after", async () => {
    const h = await openRealApp();
    const longAnswer = Array.from({ length: 60 }, (_, i) => `Step ${i}: look at module ${i} and note what it exports.`).join(" ");
    h.server.setResponder((body) => (isFoldRequest(body) ? textStream("The user asked for a tour; every module was listed.") : textStream(longAnswer)));
    await h.send("give me a tour");
    await h.see("Step 59");
    await h.idle();

    // A fresh workspace has no state.json yet: the fold still happens.
    await h.send("/compact");
    await h.see("next request:");
    const match = /next request: (\d+) → (\d+) tokens/.exec(h.frame());
    const [before, after] = [Number(match?.[1]), Number(match?.[2])];
    expect(before).toBeGreaterThan(after);
    expect(h.frame()).toContain("folded 1 turn(s) of the window into the rolling summary");
    expect(h.frame()).toContain("state.toon not written");
    expect(h.server.requests.filter((r) => isFoldRequest(r.body))).toHaveLength(1);
    await h.idle();

    await h.send("/window");
    await h.see("empty (holds up to 20 turns");
    await h.send("/goal tour the code");
    await h.see("goal tour the code");
    await h.send("/compact");
    await h.see("state.toon rewritten:");
    expect(readFileSync(workspacePaths(h.root).stateToon, "utf8")).toContain("tour the code");
  }, TEST_MS);

  test("/clear starts a new session; the working state is kept", async () => {
    const h = await openRealApp();
    echoServer(h);
    await h.send("/goal keep me");
    await h.see("goal keep me");
    await h.send("remember the word pineapple");
    await h.see("answer to remember the word pineapple");
    await h.idle();
    const first = h.controller.status().sessionId;

    await h.send("/clear");
    await h.see("new session started; the working state is kept");
    await h.idle();
    const second = h.controller.status().sessionId;
    expect(second).not.toBe(first);
    expect(h.frame()).toContain(`session ${second}`);
    expect(h.frame().split("\n").at(-1)).toBe("goal keep me");

    await h.send("what was the word?");
    await h.see("answer to what was the word?");
    const lastRequest = h.server.requests.at(-1)?.body ?? {};
    const userMessages = inputItems(lastRequest).filter((i) => i.role === "user").map((i) => i.content ?? "");
    expect(userMessages.join("\n")).not.toContain("pineapple");
    expect(existsSync(join(workspacePaths(h.root).sessionsDir, first))).toBe(true);
    expect(existsSync(join(workspacePaths(h.root).sessionsDir, second))).toBe(true);
  }, TEST_MS);
});

describe("a resumed session", () => {
  const count = (frame: string, text: string) => frame.split(text).length - 1;

  test("shows the earlier conversation before the prompt: messages, answers and tool rows, as they were shown live", async () => {
    const first = await openRealApp({ files: { "src/sum.ts": SUM } });
    first.server.setResponder((body) => {
      const user = lastUserText(body);
      if (user === "read the sum") return toolOutputsThisTurn(body).length === 0 ? toolCallStream([{ name: "read_file", arguments: { path: "src/sum.ts" } }]) : textStream("It **subtracts**: `a - b`.");
      return textStream(`answer to ${user}`);
    });
    await first.send("hello there");
    await first.see("answer to hello there");
    await first.idle();
    await first.send("read the sum");
    await first.see("It subtracts");
    await first.idle();
    const id = first.controller.status().sessionId;
    await closeRealApps();

    const h = await openRealApp({ root: first.root, resume: { kind: "latest" } });
    const frame = h.frame();
    expect(h.controller.status().sessionId).toBe(id);
    expect(frame).toContain(`session ${id} resumed: 2 earlier turn(s) below`);
    // In order, as they were shown live: message, tool row, answer (markdown rendered, not raw).
    const at = (text: string) => frame.indexOf(text);
    expect(at("› hello there")).toBeGreaterThan(at("resumed: 2 earlier"));
    expect(at("answer to hello there")).toBeGreaterThan(at("› hello there"));
    expect(at("› read the sum")).toBeGreaterThan(at("answer to hello there"));
    expect(at("read_file")).toBeGreaterThan(at("› read the sum"));
    expect(frame).toContain("src/sum.ts");
    expect(at("It subtracts: `a - b`.")).toBeGreaterThan(at("read_file"));
    expect(frame).not.toContain("**subtracts**");
    // The prompt comes after the history.
    expect(at("Ask anything")).toBeGreaterThan(at("It subtracts"));
  }, TEST_MS);

  test("/resume prints the session it switched to; /clear prints none", async () => {
    const h = await openRealApp();
    echoServer(h);
    await h.send("first question");
    await h.see("answer to first question");
    await h.idle();
    const id = h.controller.status().sessionId;
    await h.send("/clear");
    await h.see("new session started");
    await h.idle();
    expect(count(h.frame(), "answer to first question")).toBe(1);
    expect(h.frame()).not.toContain("resumed:");

    await h.send(`/resume ${id}`);
    await h.see(`session ${id} resumed: 1 earlier turn(s) below`);
    await h.idle();
    const frame = h.frame();
    expect(count(frame, "answer to first question")).toBe(2);
    expect(frame.lastIndexOf("answer to first question")).toBeGreaterThan(frame.indexOf(`session ${id} resumed`));
  }, TEST_MS);

  test("a long session shows only its newest turns, and says how to see the rest", async () => {
    const first = await openRealApp();
    echoServer(first);
    for (let i = 1; i <= 3; i++) {
      await first.send(`question ${i}`);
      await first.see(`answer to question ${i}`);
      await first.idle();
    }
    const id = first.controller.status().sessionId;
    await closeRealApps();
    const h = await openRealApp({ root: first.root, resume: { kind: "id", id } });
    const earlier = h.controller.earlierConversation();
    expect(earlier.total).toBe(3);
    expect(earlier.turns.map((t) => t.user)).toEqual(["question 1", "question 2", "question 3"]);
    // The REPL's own cut (MAX_EARLIER_LINES) is tested on the items; here the whole of a short session shows.
    expect(h.frame()).toContain(`session ${id} resumed: 3 earlier turn(s) below`);
  }, TEST_MS);
});

describe("abort", () => {
  test("Esc during a held stream aborts the turn; the partial answer stays, marked", async () => {
    const h = await openRealApp();
    const partial = "Here is the first half of a long answer";
    const { response, gate } = gatedBefore(textStream(partial), "response.output_text.done");
    h.server.enqueue(response);
    await h.send("write a long answer");
    await h.see(partial);
    await gate.reached;

    await h.keys(KEYS.escape);
    await h.see("[aborted]");
    await h.idle();
    expect(await h.server.outcome(0)).toBe("client_gone");
    gate.release();
    const frame = h.frame();
    expect(frame.indexOf(partial)).toBeLessThan(frame.indexOf("[aborted]"));
    expect(frame).not.toMatch(STACK_FRAME);

    // The session goes on: the next turn runs and shows the aborted answer to the model.
    h.server.enqueue(textStream("carrying on"));
    await h.send("go on");
    await h.see("carrying on");
    expect(JSON.stringify(h.server.requests[1]?.body.input)).toContain(partial);
  }, TEST_MS);
});

describe("startup problems", () => {
  test("no OPENAI_API_KEY against api.openai.com: a warning with what to do, then an error in the UI, no stack trace", async () => {
    const settings = testSettings();
    const env = {};
    const warning = endpointWarning(resolveEndpoint(settings, env));
    expect(warning).toBeDefined();
    const h = await openRealApp({ model: createModelClient({ settings, env }), warnings: warning ? [warning] : [] });
    expect(h.frame()).toContain("! OPENAI_API_KEY is not set; export it or set OPENAI_BASE_URL");

    await h.send("hello");
    await h.idle();
    const frame = h.frame();
    expect(frame).toContain("› hello");
    expect(frame).toContain("✗ OPENAI_API_KEY is not set; export it or set OPENAI_BASE_URL");
    expect(frame).toContain("[stopped by an error]");
    expect(frame).not.toMatch(STACK_FRAME);
    expect(frame).not.toContain("Error:");
    expect(h.server.requests).toHaveLength(0);
  }, TEST_MS);
});

describe("leaving", () => {
  test("Ctrl+D on an empty prompt leaves the app", async () => {
    const h = await openRealApp();
    await h.keys(KEYS.ctrlD);
    await h.until(h.exited, "the app to exit");
  }, TEST_MS);
});
