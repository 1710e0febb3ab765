/** Recognises a slash command in a submitted prompt by the core's one rule (src/agent/slash-catalog.ts). "/usr/bin is broken" stays a message. */
export { parseSlash, type SlashCommand } from "../../agent/front-end-contract.ts";
