/**
 * Renders the kernel protocol's TypeScript definition as a Python module, so
 * the kernel's half of the protocol is never written by hand: every exported
 * constant and limit, a TypedDict and a checking constructor per kernel
 * message, and a reader for the requests the kernel receives.
 *
 * The zod schemas go through `z.toJSONSchema`, and only the JSON Schema
 * keywords this file knows how to check in Python are accepted: any other
 * keyword (a new zod feature used in the protocol) stops the generator
 * instead of being silently dropped on the Python side.
 *
 * Pure: takes the module's exports, returns the file's text. The same renderer
 * serves the kernel protocol and the host agent protocol (RenderOptions.naming).
 * `scripts/generate-kernel-protocol.ts` is the command that writes or checks them.
 */
import { z } from "zod";

export interface RenderOptions {
  /** Repository-relative path of the TypeScript definition, named in the header. */
  source: string;
  /** Repository-relative path of the generator command, named in the header. */
  generator: string;
  /** Export name of the union of kernel → server messages (a constructor each). */
  messagesExport: string;
  /** Export name of the union of server → kernel requests (read by the kernel). */
  requestsExport: string;
  /**
   * Which protocol this is, in the generated names: "Kernel" gives KernelMessage,
   * read_kernel_request, KERNEL_MESSAGE_TYPES; "Agent" gives AgentMessage,
   * read_agent_request, AGENT_MESSAGE_TYPES.
   */
  naming: "Kernel" | "Agent";
}

// --- the JSON Schema subset, as a small typed tree -----------------------------------

type Bounds = { minimum?: number; maximum?: number; exclusiveMinimum?: number; exclusiveMaximum?: number };
type Node =
  | { kind: "string"; minLength?: number; maxLength?: number; pattern?: string }
  | { kind: "enum"; values: string[] }
  | ({ kind: "integer" } & Bounds)
  | ({ kind: "number" } & Bounds)
  | { kind: "boolean" }
  | { kind: "nullable"; inner: Node }
  | { kind: "array"; items: Node; minItems?: number; maxItems?: number }
  | { kind: "record"; key: Node; value: Node }
  | { kind: "object"; name: string; fields: Field[]; closed: boolean };
interface Field {
  key: string;
  node: Node;
  required: boolean;
}
type Json = Record<string, unknown>;

export class UnsupportedSchema extends Error {}

function isJson(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function numberAt(schema: Json, key: string, where: string): number | undefined {
  const value = schema[key];
  if (value === undefined) return undefined;
  if (typeof value !== "number") throw new UnsupportedSchema(`${where}: ${key} is not a number`);
  return value;
}

function only(schema: Json, allowed: string[], where: string): void {
  for (const key of Object.keys(schema)) {
    if (!allowed.includes(key)) throw new UnsupportedSchema(`${where}: JSON Schema keyword "${key}" has no Python check in the generator`);
  }
}

const pascal = (text: string): string =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join("");
const snake = (text: string): string =>
  text
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toLowerCase();

class SchemaReader {
  constructor(private readonly defs: Json) {}

  read(schema: unknown, name: string, where: string): Node {
    if (!isJson(schema)) throw new UnsupportedSchema(`${where}: not a schema object`);
    if (typeof schema.$ref === "string") {
      only(schema, ["$ref"], where);
      const id = schema.$ref.replace(/^#\/\$defs\//, "");
      if (!(id in this.defs)) throw new UnsupportedSchema(`${where}: unknown $ref ${schema.$ref}`);
      return this.read(this.defs[id], id, `$defs/${id}`);
    }
    if (Array.isArray(schema.anyOf)) {
      only(schema, ["anyOf"], where);
      const branches = schema.anyOf.filter((branch) => !(isJson(branch) && branch.type === "null"));
      if (branches.length !== 1 || schema.anyOf.length !== 2) throw new UnsupportedSchema(`${where}: anyOf other than "T or null"`);
      return { kind: "nullable", inner: this.read(branches[0], name, where) };
    }
    if (Array.isArray(schema.type)) {
      const types = schema.type.filter((type) => type !== "null");
      if (types.length !== 1 || schema.type.length !== 2) throw new UnsupportedSchema(`${where}: a type list other than [T, "null"]`);
      return { kind: "nullable", inner: this.read({ ...schema, type: types[0] }, name, where) };
    }
    switch (schema.type) {
      case "string":
        return this.string(schema, where);
      case "integer":
      case "number":
        only(schema, ["type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"], where);
        return {
          kind: schema.type,
          minimum: numberAt(schema, "minimum", where),
          maximum: numberAt(schema, "maximum", where),
          exclusiveMinimum: numberAt(schema, "exclusiveMinimum", where),
          exclusiveMaximum: numberAt(schema, "exclusiveMaximum", where),
        };
      case "boolean":
        only(schema, ["type"], where);
        return { kind: "boolean" };
      case "array":
        only(schema, ["type", "items", "minItems", "maxItems"], where);
        return {
          kind: "array",
          items: this.read(schema.items, `${name}Item`, `${where}[]`),
          minItems: numberAt(schema, "minItems", where),
          maxItems: numberAt(schema, "maxItems", where),
        };
      case "object":
        return this.object(schema, name, where);
      default:
        throw new UnsupportedSchema(`${where}: type ${JSON.stringify(schema.type)}`);
    }
  }

  private string(schema: Json, where: string): Node {
    only(schema, ["type", "const", "enum", "minLength", "maxLength", "pattern"], where);
    if (schema.const !== undefined || schema.enum !== undefined) {
      const values = schema.const !== undefined ? [schema.const] : schema.enum;
      if (!Array.isArray(values) || !values.every((value): value is string => typeof value === "string")) {
        throw new UnsupportedSchema(`${where}: enum of non-strings`);
      }
      return { kind: "enum", values };
    }
    if (schema.pattern !== undefined && typeof schema.pattern !== "string") throw new UnsupportedSchema(`${where}: pattern`);
    return {
      kind: "string",
      minLength: numberAt(schema, "minLength", where),
      maxLength: numberAt(schema, "maxLength", where),
      pattern: schema.pattern,
    };
  }

  private object(schema: Json, name: string, where: string): Node {
    only(schema, ["type", "properties", "required", "additionalProperties", "propertyNames"], where);
    if (schema.properties === undefined) {
      // z.record: every key checked by propertyNames, every value by additionalProperties
      if (!isJson(schema.additionalProperties)) throw new UnsupportedSchema(`${where}: an object with neither properties nor a value schema`);
      return {
        kind: "record",
        key: this.read(schema.propertyNames ?? { type: "string" }, `${name}Key`, `${where} key`),
        value: this.read(schema.additionalProperties, `${name}Value`, `${where}{}`),
      };
    }
    if (!isJson(schema.properties)) throw new UnsupportedSchema(`${where}: properties`);
    if (schema.propertyNames !== undefined) throw new UnsupportedSchema(`${where}: propertyNames beside properties`);
    if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
      throw new UnsupportedSchema(`${where}: additionalProperties other than false`);
    }
    const required = Array.isArray(schema.required) ? schema.required : [];
    const fields: Field[] = Object.entries(schema.properties).map(([key, property]) => {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new UnsupportedSchema(`${where}: field name ${JSON.stringify(key)} is not a Python identifier`);
      const node = this.read(property, `${name}${pascal(key)}`, `${where}.${key}`);
      const isRequired = required.includes(key);
      if (!isRequired && node.kind === "nullable") {
        throw new UnsupportedSchema(`${where}.${key}: optional and nullable (None could not say which is meant)`);
      }
      return { key, node, required: isRequired };
    });
    return { kind: "object", name, fields, closed: schema.additionalProperties === false };
  }
}

// --- JavaScript regular expressions that mean the same in Python ----------------------

/**
 * The pattern in Python's syntax, or an error when JavaScript and Python could
 * read it differently. Accepted: literal ASCII characters, escaped
 * punctuation, character classes of those, quantifiers, groups `(?:…)` and
 * `(…)`, alternation, `^` first and `$` last. `$` becomes `\Z` (Python's `$`
 * also matches before a final newline); `.`, `\d`, `\w`, `\s`, `\b`,
 * lookarounds, back-references and flags are refused.
 */
export function pythonPattern(source: string, flags = ""): string {
  if (flags !== "") throw new UnsupportedSchema(`pattern /${source}/${flags}: flags have no checked Python meaning`);
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) > 0x7e) throw new UnsupportedSchema(`pattern ${source}: a character outside printable ASCII`);
    if (c === "\\") {
      const next = source[i + 1] ?? "";
      if (!/^[\\^$.|?*+()[\]{}\-/]$/.test(next)) throw new UnsupportedSchema(`pattern ${source}: escape \\${next}`);
      out += next === "/" ? "/" : `\\${next}`;
      i++;
    } else if (inClass) {
      if (c === "[") throw new UnsupportedSchema(`pattern ${source}: "[" inside a class`);
      if (c === "]") inClass = false;
      out += c;
    } else if (c === "[") {
      inClass = true;
      out += c;
    } else if (c === "^") {
      if (i !== 0) throw new UnsupportedSchema(`pattern ${source}: "^" not at the start`);
      out += c;
    } else if (c === "$") {
      if (i !== source.length - 1) throw new UnsupportedSchema(`pattern ${source}: "$" not at the end`);
      out += "\\Z";
    } else if (c === ".") {
      throw new UnsupportedSchema(`pattern ${source}: "." matches different line breaks in JavaScript and Python`);
    } else if (c === "(" && source[i + 1] === "?" && source[i + 2] !== ":") {
      throw new UnsupportedSchema(`pattern ${source}: lookarounds and named groups`);
    } else {
      out += c;
    }
  }
  if (inClass) throw new UnsupportedSchema(`pattern ${source}: unclosed class`);
  return out;
}

// --- Python text ---------------------------------------------------------------------

/** A Python string literal in ASCII, so the file never depends on an encoding. */
export function pyStr(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === "\\" || char === '"') out += `\\${char}`;
    else if (code >= 0x20 && code < 0x7f) out += char;
    else if (code < 0x100) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if (code < 0x10000) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += `\\U${code.toString(16).padStart(8, "0")}`;
  }
  return `${out}"`;
}

function pyNumber(value: number): string {
  if (!Number.isFinite(value)) throw new UnsupportedSchema(`number ${value} has no Python literal`);
  return Number.isInteger(value) ? String(value) : JSON.stringify(value);
}

const PYTHON_KEYWORDS = new Set(
  "False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield".split(" "),
);
const paramName = (key: string): string => {
  const name = snake(key);
  return PYTHON_KEYWORDS.has(name) ? `${name}_` : name;
};

class PythonWriter {
  private readonly typing = new Set<string>();
  private readonly checks = new Set<string>();
  /** Module-level constants the checks share (enum tuples, compiled patterns), by their text. */
  private readonly shared = new Map<string, string>();
  private readonly sharedLines: string[] = [];
  /** Object checkers and TypedDicts, in dependency order. */
  private readonly defined = new Set<string>();
  private readonly typedDicts: string[] = [];
  private readonly checkers: string[] = [];

  constructor(private readonly patternNames: Map<string, string>) {}

  useTyping(...names: string[]): void {
    for (const name of names) this.typing.add(name);
  }

  typingImports(): string[] {
    return [...this.typing].sort();
  }

  checkImports(): string[] {
    return [...this.checks].sort();
  }

  sharedConstants(): string[] {
    return this.sharedLines;
  }

  definitions(): { typedDicts: string[]; checkers: string[] } {
    return { typedDicts: this.typedDicts, checkers: this.checkers };
  }

  /** The annotation of a value of this node. */
  type(node: Node): string {
    switch (node.kind) {
      case "string":
        return "str";
      case "enum":
        this.useTyping("Literal");
        return `Literal[${node.values.map(pyStr).join(", ")}]`;
      case "integer":
        return "int";
      case "number":
        return "float";
      case "boolean":
        return "bool";
      case "nullable":
        this.useTyping("Optional");
        return `Optional[${this.type(node.inner)}]`;
      case "array":
        this.useTyping("List");
        return `List[${this.type(node.items)}]`;
      case "record":
        this.useTyping("Dict");
        return `Dict[${this.type(node.key)}, ${this.type(node.value)}]`;
      case "object":
        this.defineObject(node);
        return node.name;
    }
  }

  /** The annotation of a constructor parameter: what callers may pass (any sequence, any mapping). */
  paramType(node: Node): string {
    switch (node.kind) {
      case "nullable":
        this.useTyping("Optional");
        return `Optional[${this.paramType(node.inner)}]`;
      case "array":
        this.useTyping("Sequence");
        return `Sequence[${this.type(node.items)}]`;
      case "record":
        this.useTyping("Mapping");
        return `Mapping[${this.type(node.key)}, ${this.type(node.value)}]`;
      default:
        return this.type(node);
    }
  }

  private use(check: string): string {
    this.checks.add(check);
    return check;
  }

  private sharedConstant(prefix: string, annotation: string, value: string): string {
    const key = `${annotation}=${value}`;
    const existing = this.shared.get(key);
    if (existing) return existing;
    const name = `_${prefix}_${this.shared.size}`;
    this.shared.set(key, name);
    this.useTyping("Final");
    this.sharedLines.push(`${name}: Final[${annotation}] = ${value}`);
    return name;
  }

  /** A Python expression that checks `value` (a side-effect-free expression) and evaluates to it. */
  check(node: Node, value: string, where: string): string {
    switch (node.kind) {
      case "string": {
        const args = [value, where];
        if (node.minLength !== undefined) args.push(`min_length=${pyNumber(node.minLength)}`);
        if (node.maxLength !== undefined) args.push(`max_length=${pyNumber(node.maxLength)}`);
        if (node.pattern !== undefined) args.push(`pattern=${this.pattern(node.pattern)}`);
        return `${this.use("check_str")}(${args.join(", ")})`;
      }
      case "enum": {
        this.useTyping("Tuple");
        const choices = this.sharedConstant("CHOICES", `Tuple[${this.type(node)}, ...]`, `(${node.values.map(pyStr).join(", ")},)`);
        return `${this.use("check_enum")}(${value}, ${where}, ${choices})`;
      }
      case "integer": {
        // Integers have no exclusive bounds in Python's check: > n is >= n + 1.
        const low = node.exclusiveMinimum !== undefined ? Math.floor(node.exclusiveMinimum) + 1 : node.minimum;
        const high = node.exclusiveMaximum !== undefined ? Math.ceil(node.exclusiveMaximum) - 1 : node.maximum;
        const args = [value, where, low === undefined ? "None" : pyNumber(low), high === undefined ? "None" : pyNumber(high)];
        while (args.length > 2 && args[args.length - 1] === "None") args.pop();
        return `${this.use("check_int")}(${args.join(", ")})`;
      }
      case "number": {
        const args = [value, where];
        if (node.minimum !== undefined) args.push(`minimum=${pyNumber(node.minimum)}`);
        if (node.maximum !== undefined) args.push(`maximum=${pyNumber(node.maximum)}`);
        if (node.exclusiveMinimum !== undefined) args.push(`exclusive_minimum=${pyNumber(node.exclusiveMinimum)}`);
        if (node.exclusiveMaximum !== undefined) args.push(`exclusive_maximum=${pyNumber(node.exclusiveMaximum)}`);
        return `${this.use("check_number")}(${args.join(", ")})`;
      }
      case "boolean":
        return `${this.use("check_bool")}(${value}, ${where})`;
      case "nullable":
        return `(None if ${value} is None else ${this.check(node.inner, value, where)})`;
      case "array": {
        const args = [value, where, `lambda item, where: ${this.check(node.items, "item", "where")}`];
        if (node.minItems !== undefined) args.push(`min_items=${pyNumber(node.minItems)}`);
        if (node.maxItems !== undefined) args.push(`max_items=${pyNumber(node.maxItems)}`);
        return `${this.use("check_list")}(${args.join(", ")})`;
      }
      case "record":
        return `${this.use("check_record")}(${value}, ${where}, lambda key, where: ${this.check(node.key, "key", "where")}, lambda item, where: ${this.check(node.value, "item", "where")})`;
      case "object":
        this.defineObject(node);
        return `${checkerName(node.name)}(${value}, ${where})`;
    }
  }

  private pattern(source: string): string {
    const python = pythonPattern(source);
    const exported = this.patternNames.get(python);
    if (exported) return exported;
    this.useTyping("Pattern");
    return this.sharedConstant("PATTERN", "Pattern[str]", `re.compile(${pyStr(python)})`);
  }

  /** A TypedDict and a checker (`check_<name>(value, where)`) for an object node, once. */
  defineObject(node: Extract<Node, { kind: "object" }>, discriminator?: { key: string; value: string }): void {
    if (this.defined.has(node.name)) return;
    this.defined.add(node.name);
    this.useTyping("TypedDict", "Mapping");
    const lines = [`class ${node.name}(TypedDict):`];
    for (const field of node.fields) {
      const annotation = discriminator?.key === field.key ? this.type({ kind: "enum", values: [discriminator.value] }) : this.type(field.node);
      if (!field.required) this.useTyping("NotRequired");
      lines.push(`    ${field.key}: ${field.required ? annotation : `NotRequired[${annotation}]`}`);
    }
    this.typedDicts.push(lines.join("\n"));

    const tuple = (keys: string[]): string => `(${keys.map(pyStr).join(", ")}${keys.length === 1 ? "," : ""})`;
    this.useTyping("Tuple", "FrozenSet");
    const required = this.sharedConstant("REQUIRED", "Tuple[str, ...]", tuple(node.fields.filter((f) => f.required).map((f) => f.key)));
    const known = node.closed ? this.sharedConstant("KNOWN", "FrozenSet[str]", `frozenset(${tuple(node.fields.map((f) => f.key))})`) : "None";
    // Only the discriminator: nothing to read back from the mapping once it is checked.
    const readsFields = node.fields.some((field) => field.key !== discriminator?.key);
    const checker = [
      `def ${checkerName(node.name)}(value: object, where: str) -> ${node.name}:`,
      `    ${readsFields ? "fields = " : ""}${this.use("check_fields")}(value, where, ${required}, ${known})`,
      `    checked: ${node.name} = {`,
    ];
    for (const field of node.fields.filter((f) => f.required)) {
      const expression =
        discriminator?.key === field.key
          ? pyStr(discriminator.value)
          : this.check(field.node, `fields[${pyStr(field.key)}]`, `where + ${pyStr(`.${field.key}`)}`);
      checker.push(`        ${pyStr(field.key)}: ${expression},`);
    }
    checker.push("    }");
    for (const field of node.fields.filter((f) => !f.required)) {
      checker.push(`    if ${pyStr(field.key)} in fields:`);
      checker.push(`        checked[${pyStr(field.key)}] = ${this.check(field.node, `fields[${pyStr(field.key)}]`, `where + ${pyStr(`.${field.key}`)}`)}`);
    }
    checker.push("    return checked");
    this.checkers.push(checker.join("\n"));
  }
}

const checkerName = (name: string): string => `_check_${snake(name)}`;

// --- the module ----------------------------------------------------------------------

interface UnionMember {
  tag: string;
  node: Extract<Node, { kind: "object" }>;
}

function unionMembers(schema: z.ZodType, exportName: string, suffix: string, io: "input" | "output", registry: z.core.$ZodRegistry<{ id: string }>): { members: UnionMember[]; reader: SchemaReader } {
  const json: unknown = z.toJSONSchema(schema, { metadata: registry, unrepresentable: "throw", io });
  if (!isJson(json) || !Array.isArray(json.oneOf)) throw new UnsupportedSchema(`${exportName}: expected a discriminated union (oneOf)`);
  const reader = new SchemaReader(isJson(json.$defs) ? json.$defs : {});
  const members = json.oneOf.map((branch, index): UnionMember => {
    if (!isJson(branch) || !isJson(branch.properties) || !isJson(branch.properties.type)) {
      throw new UnsupportedSchema(`${exportName}[${index}]: a member without a "type" field`);
    }
    const tag = branch.properties.type.const;
    if (typeof tag !== "string") throw new UnsupportedSchema(`${exportName}[${index}]: "type" is not a string literal`);
    const node = reader.read(branch, `${pascal(tag)}${suffix}`, `${exportName}.${tag}`);
    if (node.kind !== "object") throw new UnsupportedSchema(`${exportName}.${tag}: not an object`);
    return { tag, node };
  });
  return { members, reader };
}

export function renderPythonProtocol(exports: Record<string, unknown>, options: RenderOptions): string {
  const constants: string[] = [];
  const patternNames = new Map<string, string>();
  const registry = z.registry<{ id: string }>();
  let messages: z.ZodType | undefined;
  let requests: z.ZodType | undefined;
  const named: Array<{ exportName: string; schema: z.ZodType }> = [];
  let usesRe = false;

  for (const [name, value] of Object.entries(exports).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (name === options.messagesExport && value instanceof z.ZodType) messages = value;
    else if (name === options.requestsExport && value instanceof z.ZodType) requests = value;
    else if (value instanceof z.ZodType) {
      // Another exported schema (devicePlanSchema): its own TypedDict, named after the export.
      const id = pascal(name.replace(/Schema$/, ""));
      registry.add(value, { id });
      named.push({ exportName: name, schema: value });
    } else if (typeof value === "string") constants.push(`${name}: Final = ${pyStr(value)}`);
    else if (typeof value === "number") constants.push(`${name}: Final = ${pyNumber(value)}`);
    else if (typeof value === "boolean") constants.push(`${name}: Final = ${value ? "True" : "False"}`);
    else if (value instanceof RegExp) {
      const python = pythonPattern(value.source, value.flags);
      patternNames.set(python, name);
      usesRe = true;
      constants.push(`${name}: Final = re.compile(${pyStr(python)})`);
    } else if (typeof value === "function") continue; // server-side helpers (encodeKernelInput)
    else throw new UnsupportedSchema(`export ${name}: a ${typeof value} the generator does not know how to carry to Python`);
  }
  if (!messages || !requests) throw new UnsupportedSchema(`the module must export ${options.messagesExport} and ${options.requestsExport}`);

  const writer = new PythonWriter(patternNames);
  writer.useTyping("Final", "Union");
  const namedAliases: string[] = [];

  // Named schemas first, so their TypedDicts precede the messages that use them. Each is
  // read through the registry, so a named schema inside another (kernelExitSchema in
  // agentKernelSchema) is the same TypedDict wherever it appears.
  const namedChecks: string[] = [];
  for (const { exportName, schema } of named) {
    const json: unknown = z.toJSONSchema(schema, { metadata: registry, unrepresentable: "throw", io: "output" });
    const id = pascal(exportName.replace(/Schema$/, ""));
    if (!isJson(json)) throw new UnsupportedSchema(`${exportName}: not a schema object`);
    const { $schema: _dialect, $defs, ...body } = json;
    const node = new SchemaReader(isJson($defs) ? $defs : {}).read(body, id, exportName);
    const doc = `    """\`\`value\`\` as the protocol's ${id} (a new ${node.kind === "object" ? "dict" : "value"}), or ProtocolError naming the field and the limit."""`;
    const signature = `def check_${snake(id)}(value: object, where: str = ${pyStr(snake(id).replace(/_/g, " "))}) -> `;
    if (node.kind === "object") {
      writer.defineObject(node);
      namedChecks.push([`${signature}${id}:`, doc, `    return ${checkerName(id)}(value, where)`].join("\n"));
    } else if (node.kind === "enum") {
      // A named enum (agentKernelStateSchema): its Literal type under the export's name, and a check.
      namedAliases.push(`${id} = ${writer.type(node)}`);
      namedChecks.push([`${signature}${id}:`, doc, `    return ${writer.check(node, "value", "where")}`].join("\n"));
    } else {
      throw new UnsupportedSchema(`${exportName}: only object and enum schemas can be exported besides the unions`);
    }
  }

  const { members: messageMembers } = unionMembers(messages, options.messagesExport, "Message", "output", registry);
  const { members: requestMembers } = unionMembers(requests, options.requestsExport, "Request", "input", registry);

  const constructors: string[] = [];
  for (const { tag, node } of messageMembers) {
    writer.defineObject(node, { key: "type", value: tag });
    const fields = node.fields.filter((field) => field.key !== "type");
    if (fields.some((field) => paramName(field.key) === "_message")) throw new UnsupportedSchema(`${tag}: a field named like the constructor's local`);
    const params = fields.map((field) =>
      field.required ? `${paramName(field.key)}: ${writer.paramType(field.node)}` : `${paramName(field.key)}: ${writer.paramType({ kind: "nullable", inner: field.node })} = None`,
    );
    const where = (field: Field): string => pyStr(`${tag} message: ${paramName(field.key)}`);
    const lines = [
      `def ${snake(tag)}_message(${params.length ? `*, ${params.join(", ")}` : ""}) -> ${node.name}:`,
      `    """The \`\`${tag}\`\` message, checked as the server will check it (ProtocolError, a ValueError, names the field and the limit)."""`,
      `    _message: ${node.name} = {`,
      `        "type": ${pyStr(tag)},`,
    ];
    for (const field of fields.filter((f) => f.required)) {
      lines.push(`        ${pyStr(field.key)}: ${writer.check(field.node, paramName(field.key), where(field))},`);
    }
    lines.push("    }");
    for (const field of fields.filter((f) => !f.required)) {
      lines.push(`    if ${paramName(field.key)} is not None:`);
      lines.push(`        _message[${pyStr(field.key)}] = ${writer.check(field.node, paramName(field.key), where(field))}`);
    }
    lines.push("    return _message");
    constructors.push(lines.join("\n"));
  }
  for (const { tag, node } of requestMembers) writer.defineObject(node, { key: "type", value: tag });

  const lower = options.naming.toLowerCase();
  const upper = options.naming.toUpperCase();
  const dispatch = (members: UnionMember[], fn: string, union: string, typesName: string, what: string, doc: string): string => {
    const lines = [
      `def ${fn}(value: object) -> ${union}:`,
      `    """${doc}"""`,
      `    kind = value.get("type") if isinstance(value, Mapping) else None`,
    ];
    for (const { tag, node } of members) {
      lines.push(`    if kind == ${pyStr(tag)}:`);
      lines.push(`        return ${checkerName(node.name)}(value, ${pyStr(`${tag} ${what}`)})`);
    }
    lines.push(`    raise ProtocolError(f"not ${/^[aeiou]/.test(lower) ? "an" : "a"} ${lower} ${what}: its type must be one of {', '.join(${typesName})}, got {kind!r}")`);
    return lines.join("\n");
  };
  const typesConstant = (name: string, members: UnionMember[]): string =>
    `${name}: Final = (${members.map((member) => pyStr(member.tag)).join(", ")}${members.length === 1 ? "," : ""})`;
  const unionAlias = (name: string, members: UnionMember[]): string => `${name} = Union[${members.map((member) => member.node.name).join(", ")}]`;

  const readers = [
    dispatch(requestMembers, `read_${lower}_request`, `${options.naming}Request`, `${upper}_REQUEST_TYPES`, "request", `A request from the server, checked: the ${lower} acts only on what the protocol defines (ProtocolError otherwise).`),
    dispatch(messageMembers, `check_${lower}_message`, `${options.naming}Message`, `${upper}_MESSAGE_TYPES`, "message", `Any ${lower} message as a dict, checked as the server will check it (a new dict, or ProtocolError).`),
  ];
  const { typedDicts, checkers } = writer.definitions();
  const header = [
    `"""The ${lower} wire protocol for Python: constants, limits, a checking constructor per`,
    `${lower} message, and the requests the ${lower} reads.`,
    ``,
    `Generated by ${options.generator} from ${options.source}; do not edit.`,
    `Change the TypeScript definition, then run \`npm run protocol:generate\`;`,
    `\`npm run protocol:check\` (a step of \`npm test\`) fails while this file is stale.`,
    `"""`,
    `from __future__ import annotations`,
    ``,
    ...(usesRe || writer.typingImports().includes("Pattern") ? ["import re"] : []),
    `from typing import ${writer.typingImports().join(", ")}`,
    ``,
    `from ._checks import ProtocolError as ProtocolError  # re-exported: what every constructor raises`,
    `from ._checks import ${writer.checkImports().join(", ")}`,
  ];
  const sections = [
    header.join("\n"),
    constants.join("\n"),
    [typesConstant(`${upper}_MESSAGE_TYPES`, messageMembers), typesConstant(`${upper}_REQUEST_TYPES`, requestMembers)].join("\n"),
    writer.sharedConstants().join("\n"),
    namedAliases.join("\n"),
    ...typedDicts,
    [unionAlias(`${options.naming}Message`, messageMembers), unionAlias(`${options.naming}Request`, requestMembers)].join("\n"),
    ...checkers,
    ...namedChecks,
    ...constructors,
    ...readers,
  ];
  return sections.filter((section) => section.trim() !== "").join("\n\n\n") + "\n";
}
