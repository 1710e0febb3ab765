/**
 * Stable instruction sections, most general first (ADR 0079): core rules, the user's own AGENTS.md,
 * the repository's AGENTS.md / CLAUDE.md files from the root down to the current directory, project
 * instructions (VALARMIND.md), personal preferences (VALARMIND.local.md). Each file is its own
 * manifest item, tagged with its path.
 */
import { tagged, taggedOwnText, type InstructionFile, type Piece, type Section, type SectionContext } from "../section.ts";

/** The manifest id of a repository AGENTS.md / CLAUDE.md. */
export function agentsItemId(path: string): string {
  return `agents:${path}`;
}

export const USER_INSTRUCTIONS_ID = "user_instructions";

export const coreRulesSection: Section = {
  id: "core_rules",
  region: "core",
  stable: true,
  required: true,
  placement: "instructions",
  type: "core_rules",
  format: "markdown",
  reason: "always_included",
  render: (ctx) => [
    {
      id: "core_rules",
      type: "core_rules",
      format: "markdown",
      reason: "always_included",
      detail: "valarmind's rules (src/prompt/text/core-rules.md); never cut",
      placement: "instructions",
      text: taggedOwnText("core_rules", ctx.coreRules),
    },
  ],
};

/** A human-owned instruction file as one stable instructions piece; absent when missing or blank. */
function instructionFileSection(
  type: "user_instructions" | "project_instructions" | "personal_preferences",
  region: string,
  file: (ctx: SectionContext) => InstructionFile | undefined,
  what: string,
): Section {
  return {
    id: type,
    region,
    stable: true,
    placement: "instructions",
    type,
    format: "markdown",
    reason: type,
    render: (ctx) => {
      const f = file(ctx);
      if (!f || f.text.trim() === "") return "";
      return [
        {
          id: type,
          type,
          format: "markdown",
          reason: type,
          detail: `${f.path}: ${what}`,
          placement: "instructions",
          text: tagged(type, f.text, { source: f.path }),
          body: f.text,
        },
      ];
    },
  };
}

export const userInstructionsSection = instructionFileSection(
  USER_INSTRUCTIONS_ID,
  "user",
  (ctx) => ctx.userInstructions,
  "the user's own AGENTS.md (every repository), read every turn",
);

/** The repository's AGENTS.md / CLAUDE.md files, root first: one stable piece each. */
export const agentsInstructionsSection: Section = {
  id: "agents_instructions",
  region: "agents",
  stable: true,
  placement: "instructions",
  type: "agents_instructions",
  format: "markdown",
  reason: "agents_instructions",
  render: (ctx) =>
    (ctx.agentsInstructions ?? [])
      .filter((f) => f.text.trim() !== "")
      .map(
        (f): Piece => ({
          id: agentsItemId(f.path),
          type: "agents_instructions",
          format: "markdown",
          reason: "agents_instructions",
          detail: `${f.path}: the repository's instructions for ${f.path.includes("/") ? `${f.path.slice(0, f.path.lastIndexOf("/"))}/` : "the whole repository"}, read every turn`,
          placement: "instructions",
          text: tagged("agents_instructions", f.text, { source: f.path }),
          body: f.text,
        }),
      ),
};

export const projectInstructionsSection = instructionFileSection("project_instructions", "project", (ctx) => ctx.project, "shared project instructions, read every turn");

export const personalPreferencesSection = instructionFileSection("personal_preferences", "personal", (ctx) => ctx.personal, "the user's personal preferences (not shared)");
