/**
 * Just enough of a CSS reader for the stylesheet rules test
 * (tests/unit/stylesheets.test.ts): the style rules of a sheet with their
 * selectors and declarations, @media/@supports blocks entered, @keyframes
 * read (their steps are rules too, marked as such), @import targets kept. Comments and strings are honoured. Anything
 * it does not understand (nested rules, an unclosed block) is an error rather
 * than something silently skipped, so the checks cannot pass by not seeing
 * a rule.
 */

export interface Declaration {
  property: string;
  value: string;
  line: number;
}

export interface StyleRule {
  selectors: string[];
  declarations: Declaration[];
  line: number;
  /** A step of @keyframes (`50%`), not a selector. */
  keyframe: boolean;
}

export interface Stylesheet {
  rules: StyleRule[];
  imports: string[];
  keyframes: string[];
}

/** At-rules whose block holds ordinary style rules. */
const GROUPING = new Set(["media", "supports", "container", "layer"]);

/** The sheet with comments blanked out (newlines kept, so line numbers stay right). */
function withoutComments(text: string): string {
  let out = "";
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      out += c;
      if (c === "\\") out += text[++i] ?? "";
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
      out += c;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) throw new Error("unclosed comment");
      out += text.slice(i, end + 2).replace(/[^\n]/g, " ");
      i = end + 1;
    } else {
      out += c;
    }
  }
  return out;
}

/** Index of the `}` that closes the block opened just before `start`, skipping strings. */
function blockEnd(text: string, start: number): number {
  let depth = 1;
  let quote: string | null = null;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  throw new Error(`unclosed block opened before offset ${start}`);
}

/** Splits on `separator` outside strings and parentheses. */
export function splitTopLevel(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (c === separator && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text[i] === "\n") line++;
  return line;
}

function declarations(text: string, body: string, bodyStart: number): Declaration[] {
  if (body.includes("{")) throw new Error(`nested rule at line ${lineAt(text, bodyStart)}: not supported here`);
  const out: Declaration[] = [];
  let offset = bodyStart;
  for (const part of splitTopLevel(body, ";")) {
    const colon = part.indexOf(":");
    if (part.trim() !== "") {
      if (colon < 0) throw new Error(`not a declaration at line ${lineAt(text, offset)}: ${part.trim()}`);
      out.push({ property: part.slice(0, colon).trim(), value: part.slice(colon + 1).trim(), line: lineAt(text, offset + part.search(/\S/)) });
    }
    offset += part.length + 1;
  }
  return out;
}

function readBlock(text: string, from: number, to: number, sheet: Stylesheet, keyframe: boolean): void {
  let i = from;
  while (i < to) {
    const open = text.indexOf("{", i);
    const semicolon = text.indexOf(";", i);
    const prelude = text.slice(i, open < 0 || open > to ? to : open);
    if (prelude.trim() === "") return;
    // A statement at-rule (@import "x.css";) ends at its semicolon, before any block.
    if (prelude.trim().startsWith("@") && semicolon >= 0 && (open < 0 || semicolon < open)) {
      const statement = text.slice(i, semicolon).trim();
      const target = /^@import\s+(?:url\()?\s*["']([^"']+)["']/.exec(statement);
      if (target) sheet.imports.push(target[1]!);
      i = semicolon + 1;
      continue;
    }
    if (open < 0 || open > to) throw new Error(`text after the last rule at line ${lineAt(text, i)}: ${prelude.trim()}`);
    const end = blockEnd(text, open + 1);
    const head = prelude.trim();
    if (head.startsWith("@")) {
      const name = /^@([\w-]+)/.exec(head)?.[1] ?? "";
      if (GROUPING.has(name)) readBlock(text, open + 1, end, sheet, false);
      else if (name === "keyframes") {
        sheet.keyframes.push(head.slice("@keyframes".length).trim());
        readBlock(text, open + 1, end, sheet, true);
      } else throw new Error(`@${name} at line ${lineAt(text, i)}: not supported here`);
    } else {
      sheet.rules.push({
        selectors: splitTopLevel(head, ",").map((s) => s.trim().replace(/\s+/g, " ")),
        declarations: declarations(text, text.slice(open + 1, end), open + 1),
        line: lineAt(text, i + prelude.search(/\S/)),
        keyframe,
      });
    }
    i = end + 1;
  }
}

export function readStylesheet(css: string): Stylesheet {
  const text = withoutComments(css);
  const sheet: Stylesheet = { rules: [], imports: [], keyframes: [] };
  readBlock(text, 0, text.length, sheet, false);
  return sheet;
}

/** CSS Color 4 named colours. `transparent` and `currentcolor` are not colour choices and are allowed anywhere. */
const NAMED_COLOURS = new Set(
  (
    "aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet brown burlywood " +
    "cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue darkcyan darkgoldenrod darkgray " +
    "darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen " +
    "darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue dimgray dimgrey dodgerblue " +
    "firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite gold goldenrod gray green greenyellow grey honeydew " +
    "hotpink indianred indigo ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan " +
    "lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen lightskyblue lightslategray " +
    "lightslategrey lightsteelblue lightyellow lime limegreen linen magenta maroon mediumaquamarine mediumblue " +
    "mediumorchid mediumpurple mediumseagreen mediumslateblue mediumspringgreen mediumturquoise mediumvioletred " +
    "midnightblue mintcream mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid " +
    "palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum powderblue purple " +
    "rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown seagreen seashell sienna silver skyblue " +
    "slateblue slategray slategrey snow springgreen steelblue tan teal thistle tomato turquoise violet wheat white " +
    "whitesmoke yellow yellowgreen"
  ).split(" "),
);

const COLOUR_FUNCTIONS = /\b(rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\(/i;

/** The colours a declaration value spells out (hex, colour functions, named colours), ignoring strings, url()s and custom property names. */
export function rawColours(value: string): string[] {
  const bare = value
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, " ")
    .replace(/url\([^)]*\)/gi, " ")
    .replace(/--[\w-]+/g, " ");
  const found: string[] = [];
  for (const match of bare.matchAll(/#[0-9a-f]+\b/gi)) if ([4, 5, 7, 9].includes(match[0].length)) found.push(match[0]);
  const fn = COLOUR_FUNCTIONS.exec(bare);
  if (fn) found.push(`${fn[1]}()`);
  for (const match of bare.matchAll(/(?<![\w-])[a-z]+(?![\w-])/gi)) if (NAMED_COLOURS.has(match[0].toLowerCase())) found.push(match[0]);
  return found;
}

/** The class a selector is scoped by: its first class name (attribute values and strings ignored); null for element-only selectors. */
export function scopeClass(selector: string): string | null {
  const bare = selector.replace(/\[[^\]]*\]/g, " ").replace(/"[^"]*"|'[^']*'/g, " ");
  return /\.(-?[_a-zA-Z][\w-]*)/.exec(bare)?.[1] ?? null;
}
