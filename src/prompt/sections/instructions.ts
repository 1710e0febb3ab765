/** Stable instruction sections: core rules, project instructions (VALARMIND.md), personal preferences (VALARMIND.local.md). */
import { tagged, type Section } from "../section.ts";

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
      text: tagged("core_rules", ctx.coreRules),
    },
  ],
};

export const projectInstructionsSection: Section = {
  id: "project_instructions",
  region: "project",
  stable: true,
  placement: "instructions",
  type: "project_instructions",
  format: "markdown",
  reason: "project_instructions",
  render: (ctx) => {
    const file = ctx.project;
    if (!file || file.text.trim() === "") return "";
    return [
      {
        id: "project_instructions",
        type: "project_instructions",
        format: "markdown",
        reason: "project_instructions",
        detail: `${file.path}: shared project instructions, read every turn`,
        placement: "instructions",
        text: tagged("project_instructions", file.text, { source: file.path }),
        body: file.text,
      },
    ];
  },
};

export const personalPreferencesSection: Section = {
  id: "personal_preferences",
  region: "personal",
  stable: true,
  placement: "instructions",
  type: "personal_preferences",
  format: "markdown",
  reason: "personal_preferences",
  render: (ctx) => {
    const file = ctx.personal;
    if (!file || file.text.trim() === "") return "";
    return [
      {
        id: "personal_preferences",
        type: "personal_preferences",
        format: "markdown",
        reason: "personal_preferences",
        detail: `${file.path}: the user's personal preferences (not shared)`,
        placement: "instructions",
        text: tagged("personal_preferences", file.text, { source: file.path }),
        body: file.text,
      },
    ];
  },
};
