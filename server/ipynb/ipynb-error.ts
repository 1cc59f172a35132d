import { InvalidDataError } from "../persistence/errors";

/** A notebook file that cannot be imported: `path` says where ("cells[3].outputs[0].text"), `reason` why. */
export class IpynbError extends InvalidDataError {
  override readonly name: string = "IpynbError";
  constructor(readonly path: string, readonly reason: string) {
    super(path ? `invalid notebook file at ${path}: ${reason}` : `invalid notebook file: ${reason}`);
  }
}

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let text = "";
  for (const key of path) {
    if (typeof key === "number") text += `[${key}]`;
    else text += text === "" ? String(key) : `.${String(key)}`;
  }
  return text;
}
