/**
 * What a session has cost so far, from the API's usage of every request it sent (turn and fold
 * requests alike): input, the cached part of it, output, the cached share, the effective input
 * (uncached + 0.1 × cached: what the input costs in fresh-token terms when a cached token is
 * priced at a tenth) and, when the model's prices are set in settings, an estimate in USD.
 * The REPL's status line and `/cost` show it; headless `--output-format json` carries it.
 */
import { userConfigFileShown } from "../config/user-config-dir.ts";
import type { Settings } from "../config/settings-schema.ts";
import { CACHED_PRICE } from "../memory/fold-economics.ts";

export interface UsageFigures {
  input: number;
  cached: number;
  output: number;
}

export interface CostFigures {
  requests: number;
  /** Of `requests`, the fold (summary) requests. */
  foldRequests: number;
  input: number;
  cached: number;
  output: number;
  /** cached / input; 0 before any usage. */
  cachedShare: number;
  /** uncached + 0.1 × cached. */
  effectiveInput: number;
  /** USD, when `prices` are set in settings. */
  usd?: number;
  /** The fold requests' own part of the figures above: what the memory itself cost. */
  fold: UsageFigures;
}

export type Prices = NonNullable<Settings["prices"]>;

/** The prices of the model in use: its entry in `modelPrices`, else `prices` (undefined: no estimate). */
export function pricesFor(settings: Pick<Settings, "model" | "prices" | "modelPrices">): Prices | undefined {
  const own = settings.modelPrices !== undefined && Object.hasOwn(settings.modelPrices, settings.model) ? settings.modelPrices[settings.model] : undefined;
  return own ?? settings.prices;
}

/** Input priced in fresh tokens: uncached + 0.1 × cached. */
export function effectiveInput(input: number, cached: number): number {
  return input - cached + CACHED_PRICE * cached;
}

/** USD for the figures at `prices` (per million tokens); cached input at `cachedInput`, else a tenth of `input`. */
export function priceOf(figures: Pick<CostFigures, "input" | "cached" | "output">, prices: Prices): number {
  const cachedPrice = prices.cachedInput ?? prices.input * CACHED_PRICE;
  return ((figures.input - figures.cached) * prices.input + figures.cached * cachedPrice + figures.output * prices.output) / 1_000_000;
}

export class SessionCost {
  private requests = 0;
  private foldRequests = 0;
  private input = 0;
  private cached = 0;
  private output = 0;
  private readonly fold: UsageFigures = { input: 0, cached: 0, output: 0 };
  /** USD of the requests priced when they were made (at the prices of the model each used), and how many were not. */
  private usd = 0;
  private priced = 0;
  private readonly unpriced: UsageFigures = { input: 0, cached: 0, output: 0 };

  /** One request's usage; `prices` are its model's (pricesFor(settings) when it was sent), if known. */
  add(usage: UsageFigures, kind: "turn" | "fold", prices?: Prices): void {
    const cached = Math.min(usage.cached, usage.input);
    if (prices) {
      this.usd += priceOf({ input: usage.input, cached, output: usage.output }, prices);
      this.priced += 1;
    } else {
      this.unpriced.input += usage.input;
      this.unpriced.cached += cached;
      this.unpriced.output += usage.output;
    }
    this.requests += 1;
    this.input += usage.input;
    this.cached += cached;
    this.output += usage.output;
    if (kind === "fold") {
      this.foldRequests += 1;
      this.fold.input += usage.input;
      this.fold.cached += cached;
      this.fold.output += usage.output;
    }
  }

  /**
   * The session's figures. The estimate is what each request cost at its model's prices when it
   * was made (after /model, the new model's); requests made without prices are priced at `prices`,
   * the model in use's now. Without `prices`, an estimate only when every request had them.
   */
  figures(prices?: Prices): CostFigures {
    const base = {
      requests: this.requests,
      foldRequests: this.foldRequests,
      input: this.input,
      cached: this.cached,
      output: this.output,
      cachedShare: this.input > 0 ? this.cached / this.input : 0,
      effectiveInput: effectiveInput(this.input, this.cached),
      fold: { ...this.fold },
    };
    if (prices) return { ...base, usd: this.usd + priceOf(this.unpriced, prices) };
    return this.priced > 0 && this.priced === this.requests ? { ...base, usd: this.usd } : base;
  }
}

function tokens(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(0)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(Math.round(n));
}

/** Dollars as shown: four decimals under $1 (a short session costs fractions of a cent), else two. */
export function formatUsd(usd: number): string {
  if (!Number.isFinite(usd)) return "$?";
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

/** A price per million tokens as the user would write it: 0.4 × 0.1 is 0.04, not 0.04000000000000001. */
function perMillion(price: number): string {
  return `$${Number(price.toPrecision(12))}/M`;
}

/**
 * `/cost`'s lines. The figures are this run's: a resumed session (`--continue`, `/resume`) counts
 * from when it was opened again, and says so.
 */
export function costLines(f: CostFigures, prices: Prices | undefined, options: { resumed?: boolean } = {}): string[] {
  const since = options.resumed ? "since this session was resumed (earlier runs are not counted)" : "in this session";
  if (f.requests === 0) return [`no model call has reported its usage yet ${since}${options.resumed ? "" : " (a server that never sends usage shows none)"}`];
  const lines = [
    ...(options.resumed ? [`figures ${since}`] : []),
    `requests: ${f.requests}${f.foldRequests > 0 ? ` (${f.foldRequests} to fold the window)` : ""}`,
    `input: ${tokens(f.input)} tokens, ${tokens(f.cached)} of them cached (${(f.cachedShare * 100).toFixed(0)}%)`,
    `effective input: ${tokens(f.effectiveInput)} tokens (uncached + 0.1 × cached)`,
    `output: ${tokens(f.output)} tokens`,
  ];
  if (f.foldRequests > 0) {
    const share = f.fold.input > 0 ? ` (${((f.fold.cached / f.fold.input) * 100).toFixed(0)}% cached)` : "";
    const usd = prices ? `, ${formatUsd(priceOf(f.fold, prices))}` : "";
    lines.push(`of which folding the window (the memory's own cost): ${tokens(f.fold.input)} input${share}, effective ${tokens(effectiveInput(f.fold.input, f.fold.cached))}, ${tokens(f.fold.output)} output${usd}`);
  }
  if (prices && f.usd !== undefined) lines.push(`estimate: ${formatUsd(f.usd)} at ${perMillion(prices.input)} input, ${perMillion(prices.cachedInput ?? prices.input * CACHED_PRICE)} cached, ${perMillion(prices.output)} output (settings "prices")`);
  else lines.push(`no price estimate: set "prices": {"input": …, "output": …} (USD per million tokens), or "modelPrices": {"MODEL": {…}} per model, in ${userConfigFileShown()}`);
  return lines;
}
