/**
 * The shared client suite: `clientTest(name, fn)` registers one test per
 * client kind, the main-thread `ComputeClient` and the `WorkerClient` whose
 * device lives in a Worker, so every test written with it checks both
 * against the same CPU reference. `DENOGPU_TEST_CLIENTS=main` (or `worker`)
 * runs one kind only.
 */

import { type ClientOptions, type ComputeClient, createClient, WorkerClient } from "../mod.ts";
import type { Transport } from "../mod.ts";
import { TEST_FAST_READS } from "./_gpu.ts";

/** Where a client's server runs. */
export type ClientKind = "main" | "worker";

function kinds(): ClientKind[] {
  const granted = Deno.permissions.querySync?.({ name: "env", variable: "DENOGPU_TEST_CLIENTS" }).state === "granted";
  const raw = granted ? Deno.env.get("DENOGPU_TEST_CLIENTS") : undefined;
  const list = (raw ?? "main,worker").split(",").map((s) => s.trim()).filter((s) => s !== "");
  return list.filter((k): k is ClientKind => k === "main" || k === "worker");
}

/** The client kinds the suite runs. */
export const CLIENT_KINDS: readonly ClientKind[] = kinds();

/**
 * Creates a client of a kind.
 *
 * @param kind Main thread or worker.
 * @param options Client options.
 * @returns The client.
 */
export function clientOf(kind: ClientKind, options: ClientOptions = {}): Promise<ComputeClient<Transport>> {
  if (TEST_FAST_READS) options = { fastReads: true, ...options };
  return kind === "worker" ? createClient({ ...options, worker: true }) : createClient(options);
}

/**
 * Destroys a client and, for a worker client, waits for its Worker to close.
 *
 * @param client The client.
 */
export async function end(client: ComputeClient<Transport>): Promise<void> {
  client.destroy();
  if (client instanceof WorkerClient) await client.ended;
}

/**
 * Creates a client of a kind, runs `fn`, and ends the client even when `fn` throws.
 *
 * @param kind Main thread or worker.
 * @param fn The test body.
 * @param options Client options.
 */
export async function withClientOf(
  kind: ClientKind,
  fn: (client: ComputeClient<Transport>) => Promise<void> | void,
  options: ClientOptions = {},
): Promise<void> {
  const client = await clientOf(kind, options);
  try {
    await fn(client);
  } finally {
    await end(client);
  }
}

/**
 * Registers `fn` as one test per client kind, named `name [main]` and `name [worker]`.
 *
 * @param name The test's sentence.
 * @param fn The body, given a fresh client and its kind.
 * @param options Client options.
 */
export function clientTest(
  name: string,
  fn: (client: ComputeClient<Transport>, kind: ClientKind) => Promise<void> | void,
  options: ClientOptions = {},
): void {
  for (const kind of CLIENT_KINDS) {
    Deno.test(`${name} [${kind}]`, () => withClientOf(kind, (client) => fn(client, kind), options));
  }
}

/**
 * True for a client whose device runs in this process (not a `WorkerClient`):
 * checks of internals a worker client cannot reach are made for it only.
 *
 * @param client The client.
 * @returns Whether its server is in this process.
 */
export function inProcess(client: ComputeClient<Transport>): client is ComputeClient {
  return !(client instanceof WorkerClient);
}

/** The server's counters, from either kind of client (a worker client asks in ring order). */
export async function serverStats(
  client: ComputeClient<Transport>,
): Promise<{ pipelinesCompiled: number; bindGroupsCreated: number; graphCount: number; passesBegun: number }> {
  if (client instanceof WorkerClient) {
    return await client.connection.call({ method: "stats" }) as {
      pipelinesCompiled: number;
      bindGroupsCreated: number;
      graphCount: number;
      passesBegun: number;
    };
  }
  const { pipelinesCompiled, bindGroupsCreated, graphCount, passesBegun } = (client as ComputeClient).server;
  return { pipelinesCompiled, bindGroupsCreated, graphCount, passesBegun };
}

/** The server's graph doors, from either kind of client (a worker client's connection stands in for its server). */
export function graphDoors(client: ComputeClient<Transport>): {
  replay(graph: number, stream: number): void;
  graphDestroy(graph: number, stream: number): void;
} {
  return client instanceof WorkerClient ? client.connection : (client as ComputeClient).server;
}

/** A stream's capture state (a worker client's as the main thread follows it). */
export function captureState(client: ComputeClient<Transport>, stream: number): string {
  return client instanceof WorkerClient
    ? client.connection.capture(stream).state
    : (client as ComputeClient).server.stream(stream).capture.state;
}
