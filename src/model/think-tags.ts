/**
 * Reasoning models served without a reasoning parser (Qwen3, QwQ, DeepSeek-R1 on vLLM without
 * --reasoning-parser, llama.cpp with --reasoning-format none) stream their thoughts inside
 * `content`, in a leading `<think>…</think>` block. Left there, the chain of thought would be shown
 * and stored as the answer and sent back on every later request. This splits a leading block off
 * as reasoning, across chunks (a tag may arrive in pieces); anything else is the answer, untouched.
 *
 *   const split = createThinkSplitter();
 *   for (const piece of split.push(delta)) piece.kind === "reasoning" ? … : …;
 *   split.end();   // what is still held back
 */
export interface ThinkPiece {
  kind: "text" | "reasoning";
  text: string;
}

const OPEN = "<think>";
const CLOSE = "</think>";

export function createThinkSplitter(): { push(delta: string): ThinkPiece[]; end(): ThinkPiece[] } {
  // afterThink: the blank lines between the block and the answer are dropped, whatever chunks they come in.
  let state: "start" | "thinking" | "afterThink" | "answer" = "start";
  let held = "";
  const piece = (kind: ThinkPiece["kind"], text: string): ThinkPiece[] => (text === "" ? [] : [{ kind, text }]);

  function thinking(): ThinkPiece[] {
    const close = held.indexOf(CLOSE);
    if (close !== -1) {
      const thought = held.slice(0, close);
      held = held.slice(close + CLOSE.length);
      state = "afterThink";
      return [...piece("reasoning", thought), ...afterThink()];
    }
    // Keep back what could be the start of the closing tag.
    let keep = 0;
    for (let n = Math.min(CLOSE.length - 1, held.length); n > 0; n--) {
      if (CLOSE.startsWith(held.slice(-n))) {
        keep = n;
        break;
      }
    }
    const out = piece("reasoning", held.slice(0, held.length - keep));
    held = held.slice(held.length - keep);
    return out;
  }

  function afterThink(): ThinkPiece[] {
    const text = held.replace(/^\s+/, "");
    if (text === "") return [];
    held = "";
    state = "answer";
    return piece("text", text);
  }

  return {
    push(delta) {
      if (state === "answer") return piece("text", delta);
      held += delta;
      if (state === "thinking") return thinking();
      if (state === "afterThink") return afterThink();
      const lead = held.trimStart();
      if (lead.startsWith(OPEN)) {
        held = lead.slice(OPEN.length);
        state = "thinking";
        return thinking();
      }
      // Still could become "<think>" (only whitespace, or a prefix of the tag so far): wait.
      if (lead === "" || OPEN.startsWith(lead)) return [];
      state = "answer";
      const text = held;
      held = "";
      return piece("text", text);
    },
    end() {
      const rest = held;
      held = "";
      return state === "thinking" ? piece("reasoning", rest) : state === "afterThink" ? [] : piece("text", rest);
    },
  };
}
