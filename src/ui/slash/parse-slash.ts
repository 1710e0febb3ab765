/** Recognises a slash command in a submitted prompt. "/usr/bin is broken" stays a message. */
export interface SlashCommand {
  name: string;
  args: string;
}

export function parseSlash(text: string): SlashCommand | undefined {
  const match = /^\/([a-zA-Z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  return { name: (match[1] ?? "").toLowerCase(), args: (match[2] ?? "").trim() };
}
