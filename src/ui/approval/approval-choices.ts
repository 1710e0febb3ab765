/**
 * The answers the approval dialog offers for one request. Session choices name exactly what will
 * be remembered (the tool, the exact command line, or the prefix with its limits), so the user
 * never grants more than the words on screen.
 */
import type { ApprovalDecision, SessionRemember } from "../../agent/events.ts";

export interface ApprovalChoice {
  key: string;
  label: string;
  /** A second, dimmed line under the label (the limits of a prefix). */
  detail?: string;
  /** undefined: ask for a note first. */
  decision: ApprovalDecision | undefined;
}

/** What a remembered prefix never matches (docs/tools.md, "Session approvals"), in one line. */
export const PREFIX_LIMITS =
  "but never with ; & | ` $ < > ( ) quotes or globs, options that run commands or write files " +
  "(-c, -C, --output, --exec, -exec, --upload-pack, …), or paths outside the workspace (/…, ~…, ../)";

function sessionChoices(remember: SessionRemember | undefined): ApprovalChoice[] {
  if (remember === undefined) return [];
  if (remember.kind === "tool") {
    return [{ key: "a", label: `Allow every ${remember.tool} call for this session, with any arguments`, decision: { kind: "allow_session", scope: "tool" } }];
  }
  // A multi-line command is shown above, row by row: its label names it instead of repeating every line.
  const lineCount = remember.exact.split("\n").length;
  const exactLabel = lineCount > 1 ? `Allow exactly this ${lineCount}-line command for this session` : `Allow exactly \`${remember.exact}\` for this session`;
  const exact: ApprovalChoice = { key: "a", label: exactLabel, decision: { kind: "allow_session", scope: "exact" } };
  if (remember.prefix === undefined) return [exact];
  return [
    exact,
    {
      key: "p",
      label: `Allow \`${remember.prefix}\` followed by any arguments for this session`,
      detail: PREFIX_LIMITS,
      decision: { kind: "allow_session", scope: "prefix" },
    },
  ];
}

/** Allow once (y), the session choices the request offers (a, p), deny (n), deny with a note (e). */
export function approvalChoices(remember: SessionRemember | undefined): ApprovalChoice[] {
  return [
    { key: "y", label: "Allow once", decision: { kind: "allow_once" } },
    ...sessionChoices(remember),
    { key: "n", label: "Deny", decision: { kind: "deny" } },
    { key: "e", label: "Deny with a note to the model", decision: undefined },
  ];
}
