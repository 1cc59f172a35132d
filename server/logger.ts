/** One logger for the server: JSON lines on stdout (pino). */
import pino from "pino";

export type Logger = pino.Logger;

export function createLogger(level = process.env.LOG_LEVEL ?? "info"): Logger {
  return pino({ level, base: undefined });
}
