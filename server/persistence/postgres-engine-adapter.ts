/**
 * The driver adapter the WebAssembly schema engine gets for PostgreSQL
 * (migrations.ts): @prisma/adapter-pg, with two repairs the engine needs.
 *
 * - The engine's introspection reads catalog columns of PostgreSQL's
 *   one-byte `"char"` type (pg_class.relkind, pg_constraint.contype…),
 *   which the adapter refuses ("Column type 'char' could not be
 *   deserialized"). node-postgres hands such values over as strings already,
 *   so each result names them text before the adapter sees them.
 * - A shadow database (for a diff from migrations) is made as a new database
 *   on the same server, so the engine's user needs CREATEDB there. The
 *   adapter's own connectToShadowDb drops that database before closing its
 *   pool, which PostgreSQL refuses ("being accessed by other users"): here
 *   the pool closes first, and the drop forces out any connection left.
 */
import { randomUUID } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import pg from "pg";

/** pg_type oids: `"char"` and `text`. */
const CHAR_OID = 18;
const TEXT_OID = 25;

export function postgresEngineAdapter(config: pg.PoolConfig): SqlMigrationAwareDriverAdapterFactory {
  const connect = (database?: string): Promise<SqlDriverAdapter> =>
    new PrismaPg(charAsTextPool({ ...config, ...(database ? { database } : {}) }), { disposeExternalPool: true }).connect();
  return {
    provider: "postgres",
    adapterName: "@prisma/adapter-pg",
    connect: () => connect(),
    connectToShadowDb: async () => {
      const name = `mgpulab_shadow_${randomUUID().replace(/-/g, "")}`;
      const admin = await connect();
      await admin.executeScript(`CREATE DATABASE "${name}"`);
      const shadow = await connect(name);
      const dispose = shadow.dispose.bind(shadow);
      let disposed: Promise<void> | null = null;
      // Both the engine and startSchemaEngine's free() dispose it: once is enough.
      shadow.dispose = () =>
        (disposed ??= (async () => {
          try {
            await dispose();
            await admin.executeScript(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
          } finally {
            await admin.dispose();
          }
        })());
      return shadow;
    },
  };
}

/** A pool whose query results call `"char"` columns text (see the header). */
function charAsTextPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  const query = pool.query.bind(pool) as (query: string | pg.QueryConfig, values?: unknown[]) => Promise<pg.QueryResult | pg.QueryResult[]>;
  const retyped = async (text: string | pg.QueryConfig, values?: unknown[]) => {
    const result = await query(text, values);
    for (const each of Array.isArray(result) ? result : [result]) {
      for (const field of each.fields ?? []) if (field.dataTypeID === CHAR_OID) field.dataTypeID = TEXT_OID;
    }
    return result;
  };
  Object.assign(pool, { query: retyped });
  return pool;
}
