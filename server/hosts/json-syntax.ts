/**
 * Where a JSON text stops being JSON, as a person finds it in an editor:
 * line and column (1-based) and what was expected there. Node's JSON.parse
 * names a character offset at best ("… at position 318") and often nothing
 * ("Unexpected token '}', … is not valid JSON"), so a small validator walks
 * the text once, only after JSON.parse has refused it.
 */

export interface JsonSyntaxProblem {
  line: number;
  column: number;
  message: string;
}

class Stop extends Error {
  constructor(
    readonly at: number,
    message: string,
  ) {
    super(message);
  }
}

/** The first syntax error of `text`, or null when it is JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxProblem | null {
  let at = 0;
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at]!)) at++;
  };
  const found = () => (at >= text.length ? "the end of the file" : `"${text[at]}"`);
  const expect = (char: string, what: string) => {
    space();
    if (text[at] !== char) throw new Stop(at, `expected ${what}, found ${found()}`);
    at++;
  };
  const string = () => {
    at++; // the opening quote
    while (at < text.length && text[at] !== '"') {
      const char = text[at]!;
      if (char < " ") throw new Stop(at, "a line break or control character inside a string (write \\n)");
      if (char === "\\") {
        const escape = text[at + 1];
        if (escape === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) throw new Stop(at, "expected four hex digits after \\u");
          at += 6;
          continue;
        }
        if (escape === undefined || !'"\\/bfnrt'.includes(escape)) throw new Stop(at, `an unknown escape \\${escape ?? ""}`);
        at += 2;
        continue;
      }
      at++;
    }
    if (at >= text.length) throw new Stop(at, "a string that never ends (a missing closing quote)");
    at++;
  };
  const value = (): void => {
    space();
    const char = text[at];
    if (char === "{") {
      at++;
      space();
      if (text[at] === "}") {
        at++;
        return;
      }
      for (;;) {
        space();
        if (text[at] !== '"') throw new Stop(at, `expected a key in double quotes, found ${found()}`);
        string();
        expect(":", '":" after the key');
        value();
        space();
        if (text[at] === ",") {
          at++;
          space();
          if (text[at] === "}") throw new Stop(at, "a comma before the closing brace (JSON allows no trailing comma)");
          continue;
        }
        if (text[at] === "}") {
          at++;
          return;
        }
        throw new Stop(at, `expected "," or "}" after a value, found ${found()}`);
      }
    }
    if (char === "[") {
      at++;
      space();
      if (text[at] === "]") {
        at++;
        return;
      }
      for (;;) {
        value();
        space();
        if (text[at] === ",") {
          at++;
          space();
          if (text[at] === "]") throw new Stop(at, "a comma before the closing bracket (JSON allows no trailing comma)");
          continue;
        }
        if (text[at] === "]") {
          at++;
          return;
        }
        throw new Stop(at, `expected "," or "]" after a value, found ${found()}`);
      }
    }
    if (char === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(at, at + 400));
    if (literal) {
      at += literal[0].length;
      return;
    }
    throw new Stop(at, char === "'" ? "a single quote (JSON strings take double quotes)" : `expected a value, found ${found()}`);
  };
  try {
    value();
    space();
    if (at < text.length) throw new Stop(at, `expected the end of the file after the value, found ${found()}`);
    return null;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    return { ...lineAndColumn(text, error.at), message: error.message };
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lines = before.split("\n");
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}
