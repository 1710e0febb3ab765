/** A real redis-server (or valkey-server) for the store tests, on a free loopback port in a temp dir. */
import { createServer } from "node:net";
import { RedisClient } from "bun";

export const REDIS_BINARY = Bun.which("valkey-server") ?? Bun.which("redis-server");

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export interface RedisServer {
  port: number;
  url: string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts a server and waits until it answers PING. `aofDir` turns on the append-only file there. */
export async function startRedis(dir: string, options: { port?: number; aofDir?: string } = {}): Promise<RedisServer> {
  if (!REDIS_BINARY) throw new Error("redis-server is not installed");
  const port = options.port ?? (await freePort());
  const persistence = options.aofDir ? ["--appendonly", "yes", "--appendfsync", "always", "--dir", options.aofDir] : ["--appendonly", "no"];
  const proc = Bun.spawn([REDIS_BINARY, "--port", String(port), "--bind", "127.0.0.1", "--save", "", ...persistence], { cwd: dir, stdout: "ignore", stderr: "pipe" });
  const url = `redis://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    const client = new RedisClient(url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: 500 });
    try {
      await client.connect();
      if ((await client.send("PING", [])) === "PONG") break;
    } catch (error) {
      if (attempt > 200 || proc.exitCode !== null) throw new Error(`redis-server on port ${port} did not start: ${String(error)}`);
      await Bun.sleep(25);
    } finally {
      client.close();
    }
  }
  return {
    port,
    url,
    stop: async (signal = "SIGTERM") => {
      proc.kill(signal);
      await proc.exited;
    },
  };
}

export async function redisCommand(url: string, command: string, args: string[]): Promise<unknown> {
  const client = new RedisClient(url, { autoReconnect: false, enableOfflineQueue: false });
  await client.connect();
  try {
    return await client.send(command, args);
  } finally {
    client.close();
  }
}
