/**
 * `@path` attachments and images (ADR 0079), through the real CLI and the fake servers: a file is
 * expanded into the message as it is recorded (and the next turn's request repeats it unchanged),
 * a missing path stays as typed with a notice, an over-cap file is attached head+tail, `@dir/`
 * attaches a listing, an e-mail address is untouched, a symlink out of the workspace is refused,
 * images go as input_image (image_url on the chat wire), and a bad --image stops the run (exit 2).
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { cleanupTempDirs, makeTempDir } from "../support/cli.ts";
import { conversationMessages, startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { chatMessages, chatTextStream, startFakeChatServer } from "../support/fake-chat-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, jsonEvents, latestRecords } from "../agent/support/cli-chat.ts";
import { ATTACHMENT_MAX_BYTES } from "../../src/prompt/attachments.ts";
import { IMAGE_MAX_BYTES } from "../../src/prompt/images.ts";
import type { Manifest } from "../../src/prompt/manifest-schema.ts";
import { TINY_PNG } from "../support/tiny-png.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  server.setResponder(() => textStream("seen"));
  root = await makeGitWorkspace({
    "src/app.ts": "export const port = 4173;\n",
    "src/util.ts": "export const twice = (n: number) => n * 2;\n",
    "README.md": "# demo\n",
  });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

function write(path: string, content: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** The user's message in request `index` (valarmind's data messages aside). */
const sentMessage = (index = 0): string => conversationMessages(server.requests[index]?.body ?? {}).findLast((item) => item.role === "user")?.content ?? "";

/** The raw `input` items of request `index`. */
function rawInput(index = 0): Array<Record<string, unknown>> {
  const input = server.requests[index]?.body.input;
  return Array.isArray(input) ? (input as Array<Record<string, unknown>>) : [];
}

function firstManifest(stdout: string): Manifest {
  const built = jsonEvents(stdout).find((e) => e.type === "request_built");
  const path = (built?.manifest as { path?: string } | undefined)?.path;
  if (!path) throw new Error(`no request_built event in:\n${stdout}`);
  return JSON.parse(readFileSync(path, "utf8")) as Manifest;
}

describe("@path attaches a file", () => {
  test("the file is a data block in the message, a manifest item, and recorded as sent; the next turn repeats the message as it was", async () => {
    const r = await chat(["-p", "what port does @src/app.ts use?", "--json"], { cwd: root, server });
    expect(r.code).toBe(0);
    const sent = sentMessage();
    expect(sent.startsWith("what port does @src/app.ts use?\n\n[valarmind: each attachment below")).toBe(true);
    expect(sent.endsWith('<attachment path="src/app.ts" bytes="26">\nexport const port = 4173;\n</attachment>')).toBe(true);
    const user = latestRecords(root).find((rec) => rec.kind === "user");
    expect(user?.kind === "user" && user.text).toBe(sent);
    const item = firstManifest(r.stdout).items.find((i) => i.id === "attachment:src/app.ts");
    expect(item).toMatchObject({ type: "attachment", region: "task", placement: "message", stable: false });
    expect(item?.tokens).toBeGreaterThan(5);

    // The file changes; the turn that attached it keeps the form it entered the window with.
    write(join(root, "src", "app.ts"), "export const port = 8080;\n");
    const next = await chat(["-p", "and now?", "--continue"], { cwd: root, server });
    expect(next.code).toBe(0);
    const messages = conversationMessages(server.requests[1]?.body ?? {}).filter((m) => m.role === "user").map((m) => m.content);
    expect(messages).toEqual([sent, "and now?"]);
  });

  test("a path that names nothing stays as typed, with a notice", async () => {
    const r = await chat(["-p", "is @missing.ts still used?", "--json"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(sentMessage()).toBe("is @missing.ts still used?");
    const notice = jsonEvents(r.stdout).find((e) => e.type === "notice" && e.code === "attachment_not_attached");
    expect(String(notice?.message)).toContain("@missing.ts: no such file or directory");
    const plain = await chat(["-p", "is @missing.ts still used?"], { cwd: root, server });
    expect(plain.stderr).toContain("@missing.ts: no such file or directory in the workspace");
  });

  test("an e-mail address and an @ inside a word are left alone, without a notice", async () => {
    const r = await chat(["-p", "mail ops@example.org about foo@bar"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(sentMessage()).toBe("mail ops@example.org about foo@bar");
  });

  test("a file over the cap is attached as its head and tail, with a note and a notice", async () => {
    const lines = Array.from({ length: 4000 }, (_, i) => `line ${String(i).padStart(4, "0")}: ${"x".repeat(30)}`);
    write(join(root, "big.log"), `${lines.join("\n")}\n`);
    const r = await chat(["-p", "summarize @big.log"], { cwd: root, server });
    expect(r.code).toBe(0);
    const sent = sentMessage();
    expect(sent).toContain(`<attachment path="big.log" bytes="${Buffer.byteLength(`${lines.join("\n")}\n`)}" shown="head+tail">\nline 0000:`);
    expect(sent).toContain("line 3999:");
    expect(sent).not.toContain("line 2000:");
    expect(sent).toMatch(/\[… \d+ lines, \d+ bytes omitted: the file is \d+ bytes, over the 32768-byte attachment cap; read_file big\.log for the middle …\]/);
    expect(sent.length).toBeLessThan(ATTACHMENT_MAX_BYTES + 2000);
    expect(r.stderr).toContain("only its head and tail were attached");
  });

  test("@dir/ attaches a listing of the files under it", async () => {
    write(join(root, "src", "nested", "deep.ts"), "export {};\n");
    const r = await chat(["-p", "what is in @src/?"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(sentMessage()).toContain('<attachment path="src/" kind="directory" files="3">\nsrc/app.ts\nsrc/nested/deep.ts\nsrc/util.ts\n</attachment>');
  });

  test("a path is taken from the current directory first, and shown from the workspace root", async () => {
    const r = await chat(["-p", "explain @app.ts"], { cwd: join(root, "src"), server });
    expect(r.code).toBe(0);
    expect(sentMessage()).toContain('<attachment path="src/app.ts" bytes="26">');
  });

  test("a symlink out of the workspace is not followed: the reference stays as typed, with a notice", async () => {
    const outside = await makeTempDir("valarmind-outside-");
    write(join(outside, "secret.txt"), "OUTSIDE-SECRET\n");
    symlinkSync(join(outside, "secret.txt"), join(root, "notes.txt"));
    const r = await chat(["-p", "read @notes.txt"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(server.requests[0]?.raw).not.toContain("OUTSIDE-SECRET");
    expect(sentMessage()).toBe("read @notes.txt");
    expect(r.stderr).toContain("@notes.txt was not attached");
    expect(r.stderr).toContain("outside the workspace");
  });
});

describe("images", () => {
  const imagePart = (index = 0) => {
    const message = rawInput(index).findLast((item) => item.role === "user" && Array.isArray(item.content));
    return message?.content as Array<Record<string, unknown>> | undefined;
  };

  test("--image sends the image as an input_image part after the message's text; the next turn keeps only its note", async () => {
    write(join(root, "shot.png"), TINY_PNG);
    const r = await chat(["-p", "what is this?", "--image", "shot.png", "--json"], { cwd: root, server });
    expect(r.code).toBe(0);
    const parts = imagePart();
    expect(parts?.map((p) => p.type)).toEqual(["input_text", "input_image"]);
    expect(String(parts?.[0]?.text)).toStartWith("what is this?\n\n[valarmind: each attachment below");
    expect(String(parts?.[0]?.text)).toContain('<attachment path="shot.png" kind="image" type="image/png" bytes="70">');
    expect(parts?.[1]).toEqual({ type: "input_image", image_url: `data:image/png;base64,${TINY_PNG.toString("base64")}`, detail: "auto" });
    expect(firstManifest(r.stdout).items.find((i) => i.id === "attachment:shot.png:image")).toMatchObject({ type: "attachment", tokens: 255 });

    const next = await chat(["-p", "and the colour?", "--continue"], { cwd: root, server });
    expect(next.code).toBe(0);
    expect(rawInput(1).some((item) => Array.isArray(item.content))).toBe(false);
    expect(server.requests[1]?.raw).not.toContain("data:image/png");
    expect(sentMessage(1)).toBe("and the colour?");
  });

  test("@shot.png in the message attaches the image the same way", async () => {
    write(join(root, "ui", "shot.png"), TINY_PNG);
    const r = await chat(["-p", "why is @ui/shot.png blank?"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(imagePart()?.map((p) => p.type)).toEqual(["input_text", "input_image"]);
  });

  test("on the chat wire the image goes as an image_url part", async () => {
    const chatServer = startFakeChatServer();
    try {
      chatServer.setResponder(() => chatTextStream("seen"));
      write(join(root, "shot.png"), TINY_PNG);
      const r = await chat(["-p", "what is this?", "--image", "shot.png"], { cwd: root, env: { OPENAI_BASE_URL: chatServer.baseURL, VALARMIND_WIRE_API: "chat" } });
      expect(r.code).toBe(0);
      const body = chatServer.requests[0]?.body ?? {};
      const user = (body.messages as Array<{ role: string; content: unknown }>).findLast((m) => m.role === "user");
      const parts = user?.content as Array<Record<string, unknown>>;
      // The message's text, its image, then the data message the chat wire joins to it.
      const image = parts.findIndex((p) => p.type === "image_url");
      expect(parts[image]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${TINY_PNG.toString("base64")}` } });
      expect(parts[image - 1]).toMatchObject({ type: "text" });
      expect(String(parts[image - 1]?.text)).toStartWith("what is this?");
      expect(chatMessages(body).length).toBeGreaterThan(1);
    } finally {
      await chatServer.close();
    }
  });

  test("--image with a file that is not an image, too big or missing: exit 2 naming the flag, nothing sent", async () => {
    write(join(root, "notes.png"), "just text, whatever the name says\n");
    const big = Buffer.alloc(IMAGE_MAX_BYTES + 1);
    TINY_PNG.copy(big);
    write(join(root, "huge.png"), big);
    for (const [file, says] of [
      ["notes.png", "--image notes.png is not a PNG, JPEG, GIF or WebP image"],
      ["huge.png", `--image huge.png is ${IMAGE_MAX_BYTES + 1} bytes, over the ${IMAGE_MAX_BYTES}-byte (5 MB) cap for images`],
      ["nope.png", "--image nope.png: no such file"],
    ] as const) {
      const r = await chat(["-p", "look", "--image", file], { cwd: root, server });
      expect(r.code, file).toBe(2);
      expect(r.stderr, file).toContain(says);
    }
    expect(server.requests).toHaveLength(0);
  });

  test("--image needs -p", async () => {
    const r = await chat(["--image", "shot.png"], { cwd: root, server });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--image needs -p MESSAGE");
  });

  test("an @ image that is not one, or is too big, stays as typed with a notice", async () => {
    write(join(root, "fake.png"), "not an image\n");
    const r = await chat(["-p", "look at @fake.png"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(sentMessage()).toBe("look at @fake.png");
    expect(r.stderr).toContain("@fake.png was not attached (fake.png is not a PNG, JPEG, GIF or WebP image");
  });
});
