/** The text an input item carries (a message's content, a call's arguments, an output, reasoning). */
import type { InputItem } from "./types.ts";

export function inputItemText(item: InputItem): string {
  switch (item.type) {
    case "message":
      return item.content;
    case "function_call":
      return item.arguments;
    case "function_call_output":
      return item.output;
    case "reasoning_text":
      return item.text;
    case "reasoning":
      return item.summary.map((part) => part.text).join("\n");
  }
}
