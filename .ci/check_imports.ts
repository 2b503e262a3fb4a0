/**
 * The import check of the gate: no import cycle among the module's files, and
 * every import points down the layers of the design:
 *
 * ```
 * mod.ts, server.ts ─► client ─► { worker/link, worker/host } ─► { server, worker/wire } ─► options
 *   ─► { stream, tune, collective } ─► { graph, profile } ─► { memory, kernel } ─► contract
 *   ─► { _util, errors, ids, logger }
 * ```
 *
 * A file may import files of its own folder (cycles among them are still
 * refused) and files of lower layers; never a higher layer, and never a
 * sibling folder of the same layer. `src/worker/` is split by thread: the
 * main thread's link (`worker/link`) and the Worker's host (`worker/host`),
 * with the wire format both speak (`worker/wire`) below them; the link never
 * imports `server/` (it reaches a server only through the wire).
 *
 * Usage: `deno run --allow-read --allow-run .ci/check_imports.ts [entry ...]`
 * (default entries: `mod.ts` and `server.ts` of the current folder). Exits 1
 * and names every cycle and violation it finds.
 *
 * @module
 */

/** Layer of each top folder (or root file) under `src/`; higher imports lower. */
export const LAYERS: Readonly<Record<string, number>> = {
  "_util": 0,
  "errors": 0,
  "errors.ts": 0,
  "ids.ts": 0,
  "logger.ts": 0,
  "contract": 1,
  "memory": 2,
  "kernel": 2,
  "graph": 3,
  "profile": 3,
  "stream": 4,
  "tune": 4,
  "collective": 4,
  "options": 5,
  "server": 6,
  "worker/wire": 6,
  "worker/link": 7,
  "worker/host": 7,
  "client": 8,
};

/** Imports refused whatever the layers say: folder → folders it never imports, and why. */
export const NEVER: Readonly<Record<string, { folders: readonly string[]; why: string }>> = {
  "worker/link": { folders: ["server"], why: "the Worker link reaches a server only through the wire" },
};

/** An import graph: file → files it imports (paths relative to the root). */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** Every import cycle of `graph` (strongly connected components of two or more files, or a self-import). */
export function findCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    // Iterative Tarjan: each frame is a node and the position in its edge list.
    const frames: [string, number][] = [[start, 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const [v, i] = frame;
      const edges = graph.get(v) ?? [];
      if (i < edges.length) {
        frame[1]++;
        const w = edges[i]!;
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          frames.push([w, 0]);
        } else if (onStack.has(w)) {
          low.set(v, Math.min(low.get(v)!, index.get(w)!));
        }
        continue;
      }
      frames.pop();
      if (frames.length > 0) {
        const parent = frames[frames.length - 1]![0];
        low.set(parent, Math.min(low.get(parent)!, low.get(v)!));
      }
      if (low.get(v) === index.get(v)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
      }
    }
  }
  return cycles;
}

/** The layer key of a path under `src/` (`"stream"`, `"ids.ts"`, `"worker/link"`), or null outside `src/`. */
function layerKey(path: string): string | null {
  const worker = /^src\/(worker\/[^/]+)\//.exec(path);
  if (worker !== null) return worker[1]!;
  const m = /^src\/([^/]+)/.exec(path);
  return m === null ? null : m[1]!;
}

/** Imports that point up the layers or across sibling folders, as `from → to (why)`. */
export function findLayerViolations(graph: ImportGraph): string[] {
  const out: string[] = [];
  for (const [from, deps] of graph) {
    const a = layerKey(from);
    if (a === null) continue; // entry points may import anything
    for (const to of deps) {
      const b = layerKey(to);
      if (b === null) {
        out.push(`${from} → ${to} (src/ imports a file outside src/)`);
        continue;
      }
      if (a === b) continue;
      if (NEVER[a]?.folders.includes(b)) {
        out.push(`${from} → ${to} (${a} never imports ${b}: ${NEVER[a]!.why})`);
        continue;
      }
      const la = LAYERS[a];
      const lb = LAYERS[b];
      if (la === undefined || lb === undefined) {
        out.push(`${from} → ${to} (folder ${la === undefined ? a : b} has no layer in .ci/check_imports.ts)`);
      } else if (lb > la) {
        out.push(`${from} → ${to} (${a} is below ${b})`);
      } else if (lb === la && la > 0) {
        out.push(`${from} → ${to} (${a} and ${b} are siblings of one layer)`);
      }
    }
  }
  return out.sort();
}

/** The import graph of the local files reachable from `entries`, from `deno info --json`. */
export async function importGraph(root: string, entries: readonly string[]): Promise<Map<string, string[]>> {
  const base = new URL(`file://${root.endsWith("/") ? root : root + "/"}`).href;
  const graph = new Map<string, string[]>();
  for (const entry of entries) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", entry],
      cwd: root,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(`deno info ${entry} failed: ${new TextDecoder().decode(out.stderr)}`);
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: {
        specifier: string;
        dependencies?: { code?: { specifier?: string }; type?: { specifier?: string } }[];
      }[];
    };
    for (const m of info.modules) {
      if (!m.specifier.startsWith(base)) continue;
      const deps = new Set<string>();
      for (const d of m.dependencies ?? []) {
        for (const s of [d.code?.specifier, d.type?.specifier]) {
          if (s !== undefined && s.startsWith(base)) deps.add(s.slice(base.length));
        }
      }
      graph.set(m.specifier.slice(base.length), [...deps].sort());
    }
  }
  return graph;
}

if (import.meta.main) {
  const entries = Deno.args.length > 0 ? Deno.args : ["mod.ts", "server.ts"].filter((f) => {
    try {
      return Deno.statSync(f).isFile;
    } catch {
      return false;
    }
  });
  const graph = await importGraph(Deno.cwd(), entries);
  const cycles = findCycles(graph);
  const violations = findLayerViolations(graph);
  for (const c of cycles) console.error(`import cycle among ${c.length} files: ${c.join(", ")}`);
  for (const v of violations) console.error(`import against the layers: ${v}`);
  if (cycles.length > 0 || violations.length > 0) {
    console.error(
      `check_imports: ${cycles.length} cycle(s), ${violations.length} import(s) against the layers, in ${graph.size} files`,
    );
    Deno.exit(1);
  }
  console.log(`check_imports: ${graph.size} files, no cycle, every import points down the layers`);
}
