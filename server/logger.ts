/**
 * One logger for the server: JSON lines on stdout (pino), reached through one
 * type. Every part of the server that reports is given a `Log`: a level, a
 * sentence, and optional fields for the JSON line (an `err` field is written
 * with its stack by pino's serialiser). Only the entry point makes the pino
 * instance and turns it into a Log (`logTo`); a module never sees pino itself.
 */
import pino from "pino";

export type LogLevel = "info" | "warning" | "error";

export type Log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

/** The pino instance behind the server's Log: only the entry point (and tests) make one. */
export type Logger = pino.Logger;

export function createLogger(level = process.env.LOG_LEVEL ?? "info"): Logger {
  return pino({ level, base: undefined });
}

/** The Log that writes to `logger`: the same JSON line a direct pino call writes. */
export function logTo(logger: Logger): Log {
  return (level, message, fields) => {
    const method = level === "warning" ? "warn" : level;
    if (fields) logger[method](fields, message);
    else logger[method](message);
  };
}
