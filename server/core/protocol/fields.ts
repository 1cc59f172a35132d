/** The fields commands share, checked the same way in every op that takes them (ops-*.ts). */
import { z } from "zod";
import { MAX_ID_CHARS, MAX_SOURCE_CHARS, MAX_TITLE_CHARS } from "../limits";

export const id = z.string().min(1).max(MAX_ID_CHARS).regex(/^[A-Za-z0-9_-]+$/, "ids are letters, digits, _ and -");
/** A configured host's id (part of its agent's id, so plain like every id); the lab checks that it exists. */
export const hostId = id;
export const cellKind = z.enum(["code", "markdown"]);
/** Form values: identifiers to plain scalars (strings short), at most a few dozen. */
export const parameterValues = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "parameter names are identifiers"),
    z.union([z.string().max(200), z.number(), z.boolean()]),
  )
  .refine((values) => Object.keys(values).length <= 64, "at most 64 parameters");
export const source = z.string().max(MAX_SOURCE_CHARS, `a cell holds at most ${MAX_SOURCE_CHARS} characters`);
export const isoTime = z.iso.datetime({ offset: true, message: "times are ISO 8601 with a zone, e.g. 2026-11-26T09:00:00Z" });
export const title = z.string().trim().min(1, "a title is needed").max(MAX_TITLE_CHARS, `a title has at most ${MAX_TITLE_CHARS} characters`);
