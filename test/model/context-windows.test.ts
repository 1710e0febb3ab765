/**
 * The status line's context window: the built-in table of known windows agrees with the
 * published figures gpt-tokenizer carries for the same names, the `contextWindow` setting wins,
 * an unknown name has no window, and the real controller puts the window in its status.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as models from "gpt-tokenizer/models";
import { SessionChatController } from "../../src/cli/chat/chat-controller.ts";
import { contextWindowFor, knownContextWindow } from "../../src/model/context-windows.ts";
import { fakeModel, makeGitWorkspace, testSettings } from "../agent/support/agent-harness.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import { startFakeResponsesServer, type FakeResponsesServer } from "../support/fake-responses-server.ts";

function publishedWindow(spec: unknown): number | undefined {
  if (typeof spec !== "object" || spec === null || !("context_window" in spec)) return undefined;
  return typeof spec.context_window === "number" ? spec.context_window : undefined;
}

describe("known context windows", () => {
  test("every name the table knows has the window gpt-tokenizer's model specs publish for it", () => {
    const known = Object.entries(models).flatMap(([name, spec]) => {
      const ours = knownContextWindow(name);
      return ours === undefined ? [] : [{ name, ours, published: publishedWindow(spec) }];
    });
    expect(known.filter((entry) => entry.ours !== entry.published)).toEqual([]);
    // The common families are covered, dated snapshots included.
    for (const name of ["gpt-5", "gpt-5-mini", "gpt-5.5", "gpt-4.1", "gpt-4.1-mini-2025-04-14", "gpt-4o", "o3", "o4-mini"]) {
      expect({ name, known: known.some((entry) => entry.name === name) }).toEqual({ name, known: true });
    }
  });

  test("windows of the common names; a provider prefix and case do not matter; unknown names have none", () => {
    expect(knownContextWindow("gpt-5")).toBe(400_000);
    expect(knownContextWindow("gpt-5-chat-latest")).toBe(128_000);
    expect(knownContextWindow("gpt-5.5")).toBe(1_050_000);
    expect(knownContextWindow("gpt-5.4-mini")).toBe(400_000);
    expect(knownContextWindow("gpt-4.1-nano")).toBe(1_047_576);
    expect(knownContextWindow("o3-mini")).toBe(200_000);
    expect(knownContextWindow("openai/GPT-5-Mini")).toBe(400_000);
    expect(knownContextWindow("qwen2.5-coder:7b")).toBeUndefined();
    expect(knownContextWindow("gpt-4o-realtime-preview")).toBeUndefined();
    expect(knownContextWindow("gpt-test")).toBeUndefined();
  });

  test("the contextWindow setting wins over the table and gives a window to a model it does not know", () => {
    expect(contextWindowFor("gpt-5", 272_000)).toBe(272_000);
    expect(contextWindowFor("llama-3.1-8b", 131_072)).toBe(131_072);
    expect(contextWindowFor("llama-3.1-8b", undefined)).toBeUndefined();
  });
});

describe("the controller's status", () => {
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

  async function statusFor(settings: Parameters<typeof testSettings>[0], switchTo?: string) {
    const controller = await SessionChatController.open({ root, settings: testSettings(settings), model: fakeModel(server), interactive: true, resume: { kind: "new" }, warnings: [] });
    try {
      if (switchTo !== undefined) await controller.runCommand("model", switchTo);
      return controller.status();
    } finally {
      await controller.close();
    }
  }

  test("carries the model's window, the setting's when set, none for an unknown model; /model changes it", async () => {
    expect((await statusFor({ model: "gpt-5-mini" })).contextWindowTokens).toBe(400_000);
    expect((await statusFor({ model: "gpt-5-mini", contextWindow: 64_000 })).contextWindowTokens).toBe(64_000);
    expect((await statusFor({ model: "local-model" })).contextWindowTokens).toBeUndefined();
    expect((await statusFor({ model: "local-model" }, "gpt-4.1")).contextWindowTokens).toBe(1_047_576);
  });
});
