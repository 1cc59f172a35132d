/**
 * Settings for the whole page, imported by each page's top client component
 * before anything parses a message.
 */
import { z } from "zod";

// zod compiles object parsers with `new Function` after probing whether eval is
// allowed; the lab's Content-Security-Policy forbids eval (no 'unsafe-eval'), so
// the probe itself is a reported violation. The interpreted parsers are fast
// enough for what a page validates.
z.config({ jitless: true });
