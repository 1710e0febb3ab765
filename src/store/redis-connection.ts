/**
 * One connection to the shared store per operation (Bun's built-in Redis client): a CLI command
 * opens, works and closes, so no socket keeps a process alive. An unreachable server is an error
 * that names the URL without its credentials.
 */
import { RedisClient } from "bun";
import { describeError, ValarmindError } from "../errors.ts";
import { parsedWithoutCredentials } from "../secrets/url-credentials.ts";

/** The URL as it may be shown: no user name, no password. */
export function displayRedisUrl(url: string): string {
  return parsedWithoutCredentials(url)?.toString().replace(/\/$/, "") ?? "the configured Redis URL";
}

/** The server could not be reached (or dropped the connection): reads may fall back, writes fail. */
export class StoreUnreachableError extends ValarmindError {
  readonly url: string;
  constructor(url: string, cause: unknown, whatHappened: string) {
    super(`cannot reach the state store ${displayRedisUrl(url)} (${describeError(cause)}); ${whatHappened}`, {
      hint: "Start the server or check the URL (setting 'store' or VALARMIND_STORE): a wrong password, or rediss:// to a server without TLS, shows as a closed connection too. 'VALARMIND_STORE=file' works from the local file meanwhile.",
      cause,
    });
    this.name = "StoreUnreachableError";
    this.url = url;
  }
}

const CONNECTION_ERRORS = /^ERR_REDIS_(CONNECTION|SOCKET|TLS|AUTHENTICATION|IDLE_TIMEOUT)|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND/;

/** Whether an error means the server is gone rather than that it refused a command. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return (typeof code === "string" && CONNECTION_ERRORS.test(code)) || /connection (is )?closed|connection has failed|socket/i.test(describeError(error));
}

export const CONNECT_TIMEOUT_MS = 3_000;
/**
 * A connection with a command in flight and no answer for this long is given up: a server that
 * froze (SIGSTOP, a partition, a hung host) without closing the socket would otherwise leave the
 * command pending forever. Every operation here is a few round trips, so 5 s of silence is a dead server.
 */
export const IDLE_TIMEOUT_MS = 5_000;

/** Opens a connection or throws `StoreUnreachableError` saying `whatHappened` (e.g. "nothing was changed"). */
export async function connectRedis(url: string, whatHappened: string): Promise<RedisClient> {
  const client = new RedisClient(url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: CONNECT_TIMEOUT_MS, idleTimeout: IDLE_TIMEOUT_MS });
  try {
    await client.connect();
  } catch (error) {
    client.close();
    throw new StoreUnreachableError(url, error, whatHappened);
  }
  return client;
}
