/** Stable instruction sections: core rules, project instructions (VALARMIND.md), personal preferences (VALARMIND.local.md). */
import { tagged, taggedOwnText, type InstructionFile, type Section, type SectionContext } from "../section.ts";

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
  type: "project_instructions" | "personal_preferences",
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

export const projectInstructionsSection = instructionFileSection("project_instructions", "project", (ctx) => ctx.project, "shared project instructions, read every turn");

export const personalPreferencesSection = instructionFileSection("personal_preferences", "personal", (ctx) => ctx.personal, "the user's personal preferences (not shared)");
