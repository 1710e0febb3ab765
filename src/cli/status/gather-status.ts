/**
 * The facts `statusRows` reports, read from this machine: the settings and what became of the
 * project file, the folder's trust, bubblewrap's probe and the process limit it allows, the
 * endpoint and where its key comes from. Nothing is started and no request is made.
 */
import type { LoadedSettings } from "../../config/load-settings.ts";
import type { Settings } from "../../config/settings-schema.ts";
import { resolveEndpoint } from "../../model/client-factory.ts";
import { probeBubblewrap } from "../../sandbox/bubblewrap.ts";
import { sandboxProcessBound } from "../../sandbox/process-limit.ts";
import type { TrustDecision } from "../actions/workspace-trust.ts";
import type { StatusFacts } from "./status-report.ts";

export interface StatusSource {
  root: string;
  loaded: LoadedSettings;
  trust: TrustDecision;
  /** The REPL's session: its own settings, approval mode and allowances. */
  session?: { id: string; settings: Settings; approvals: Settings["approvals"]; allowances: readonly string[] };
}

export function gatherStatus(source: StatusSource): StatusFacts {
  const settings = source.session?.settings ?? source.loaded.settings;
  const bubblewrap = settings.sandbox === "off" ? undefined : probeBubblewrap();
  const bound = bubblewrap?.available ? sandboxProcessBound(settings.shellProcessLimit, bubblewrap) : undefined;
  const endpoint = resolveEndpoint(settings);
  return {
    root: source.root,
    trust: source.trust,
    project: source.loaded.project,
    settings,
    approvals: source.session?.approvals ?? settings.approvals,
    allowances: source.session?.allowances ?? [],
    bubblewrap,
    processBound: bound,
    baseURL: endpoint.baseURL,
    keySource: endpoint.keySource,
    ...(source.session !== undefined ? { sessionId: source.session.id } : {}),
  };
}
