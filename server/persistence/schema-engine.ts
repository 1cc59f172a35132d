/**
 * Prisma's schema engine as WebAssembly, so migrations need no native binary
 * (the CLI's binary download cannot work on these machines).
 *
 * The package's main entry imports a `.wasm` module, which Node 20 refuses;
 * we load its `schema_engine_bg` glue and instantiate the `.wasm` by hand.
 * The driver adapter must be wrapped by `bindMigrationAwareSqlAdapterFactory`
 * (the engine calls its methods unbound).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import {
  bindMigrationAwareSqlAdapterFactory,
  DriverAdapterError,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
} from "@prisma/driver-adapter-utils";
import type * as Engine from "@prisma/schema-engine-wasm/schema_engine_bg";

export type SchemaEngine = Engine.SchemaEngine;
export type { MigrationList } from "@prisma/schema-engine-wasm/schema_engine_bg";

type Glue = typeof Engine & { __wbg_set_wasm(exports: WebAssembly.Exports): void };

let gluePromise: Promise<Glue> | null = null;

/** Instantiates the wasm module once per process. */
function loadGlue(): Promise<Glue> {
  gluePromise ??= (async () => {
    const gluePath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
    // A real dynamic import: the glue is an ES module and this package is CommonJS.
    const glue = (await import(gluePath)) as Glue;
    const bytes = await readFile(path.join(path.dirname(gluePath), "schema_engine_bg.wasm"));
    const compiled = await WebAssembly.compile(bytes);
    const imports: WebAssembly.Imports = {};
    for (const { module: name } of WebAssembly.Module.imports(compiled)) imports[name] = glue as unknown as WebAssembly.ModuleImports;
    const instance = await WebAssembly.instantiate(compiled, imports);
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return glue;
  })();
  return gluePromise;
}

export interface EngineLog {
  (line: string): void;
}

export interface EngineHandle {
  engine: SchemaEngine;
  /** The engine's message for `error`, with the driver's own error filled in for "External error id#N". */
  describe(error: unknown): string;
  /** Frees the engine and closes its database connections. */
  free(): Promise<void>;
}

/** Starts an engine on `adapterFactory`'s database for the given schema file. */
export async function startSchemaEngine(
  schema: { path: string; content: string },
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  log: EngineLog = () => {},
): Promise<EngineHandle> {
  const glue = await loadGlue();
  const connections: SqlDriverAdapter[] = [];
  const bound = bindMigrationAwareSqlAdapterFactory(acceptingScripts(adapterFactory, connections));
  const engine = await glue.SchemaEngine.new({ datamodels: [[schema.path, schema.content]] }, log, bound);
  return {
    engine,
    // Freeing the engine does not close its connections (an open one keeps SQLite's lock).
    free: async () => {
      engine.free();
      await Promise.all(connections.splice(0).map((connection) => connection.dispose()));
    },
    describe: (error) => {
      const message = messageOf(error);
      return message.replace(/External error id#(\d+)/g, (whole, id: string) => {
        const registered = bound.errorRegistry.consumeError(Number(id));
        return registered ? `${whole}: ${messageOf(registered.error)}` : whole;
      });
    },
  };
}

/**
 * The engine replays migrations on the shadow database through `executeRaw`
 * with the whole migration.sql, which better-sqlite3's `prepare` refuses
 * ("more than one statement"). Such a call, which has no parameters, is run
 * as a script instead.
 */
function acceptingScripts(factory: SqlMigrationAwareDriverAdapterFactory, opened: SqlDriverAdapter[]): SqlMigrationAwareDriverAdapterFactory {
  const patch = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
    opened.push(adapter);
    const executeRaw = adapter.executeRaw.bind(adapter);
    adapter.executeRaw = async (query) => {
      try {
        return await executeRaw(query);
      } catch (error) {
        if (query.args.length > 0 || !/more than one statement/.test(describeDriverError(error))) throw error;
        await adapter.executeScript(query.sql);
        return 0;
      }
    };
    return adapter;
  };
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => patch(await factory.connect()),
    connectToShadowDb: async () => patch(await factory.connectToShadowDb()),
  };
}

function describeDriverError(error: unknown): string {
  const cause = error instanceof DriverAdapterError ? error.cause : undefined;
  return `${messageOf(error)} ${cause ? JSON.stringify(cause) : ""}`;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null) {
    const record = error as Record<string, unknown>;
    if (typeof record.message === "string") return record.message;
    return JSON.stringify(error);
  }
  return String(error);
}

export const NO_FILTER = { externalTables: [], externalEnums: [] };
