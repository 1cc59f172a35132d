/**
 * Times every statement a driver adapter runs, inside and outside
 * transactions, and tells an observer (the operator's metrics). It wraps the
 * driver's own adapter, below the SQLite serialisation in database.ts, so a
 * statement's time is the database's, not its wait for the connection.
 */
import type { SqlDriverAdapter, SqlDriverAdapterFactory, SqlQueryable, Transaction } from "@prisma/driver-adapter-utils";
import type { DatabaseProvider } from "./database-target";

export interface DatabaseStatement {
  provider: DatabaseProvider;
  /** "query": a statement that returns rows; "execute": one that returns a count (a write). */
  operation: "query" | "execute";
  seconds: number;
}

export type StatementObserver = (statement: DatabaseStatement) => void;

export function timedAdapterFactory(factory: SqlDriverAdapterFactory, provider: DatabaseProvider, observe: StatementObserver): SqlDriverAdapterFactory {
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => timedAdapter(await factory.connect(), provider, observe),
  };
}

function timedAdapter(adapter: SqlDriverAdapter, provider: DatabaseProvider, observe: StatementObserver): SqlDriverAdapter {
  const timed: SqlDriverAdapter = {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    ...timedQueries(adapter, provider, observe),
    executeScript: (script) => adapter.executeScript(script),
    dispose: () => adapter.dispose(),
    startTransaction: async (isolationLevel) => timedTransaction(await adapter.startTransaction(isolationLevel), provider, observe),
  };
  if (adapter.getConnectionInfo) timed.getConnectionInfo = adapter.getConnectionInfo.bind(adapter);
  return timed;
}

function timedTransaction(transaction: Transaction, provider: DatabaseProvider, observe: StatementObserver): Transaction {
  const timed: Transaction = {
    provider: transaction.provider,
    adapterName: transaction.adapterName,
    options: transaction.options,
    ...timedQueries(transaction, provider, observe),
    commit: () => transaction.commit(),
    rollback: () => transaction.rollback(),
  };
  if (transaction.createSavepoint) timed.createSavepoint = (name) => transaction.createSavepoint!(name);
  if (transaction.rollbackToSavepoint) timed.rollbackToSavepoint = (name) => transaction.rollbackToSavepoint!(name);
  if (transaction.releaseSavepoint) timed.releaseSavepoint = (name) => transaction.releaseSavepoint!(name);
  return timed;
}

/** queryRaw and executeRaw, each timed (a failed statement counts too: it took the database's time). */
function timedQueries(queryable: SqlQueryable, provider: DatabaseProvider, observe: StatementObserver): Pick<SqlQueryable, "queryRaw" | "executeRaw"> {
  const time = async <T>(operation: DatabaseStatement["operation"], body: () => Promise<T>): Promise<T> => {
    const began = performance.now();
    try {
      return await body();
    } finally {
      observe({ provider, operation, seconds: (performance.now() - began) / 1000 });
    }
  };
  return {
    queryRaw: (query) => time("query", () => queryable.queryRaw(query)),
    executeRaw: (query) => time("execute", () => queryable.executeRaw(query)),
  };
}
