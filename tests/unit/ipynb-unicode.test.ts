/** Lone UTF-16 surrogates in an imported file: refused, naming the field and the character; valid text of any plane kept. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseIpynb } from "../../server/ipynb/import";
import { IpynbError } from "../../server/ipynb/ipynb-error";
import { firstInvalidUtf8 } from "../../server/ipynb/unicode";

/** A file's JSON text; `\\ud800` stays a JSON escape, as a file spells a lone surrogate. */
const file = (cells: string, metadata = "{}") => `{"nbformat":4,"nbformat_minor":5,"metadata":${metadata},"cells":[${cells}]}`;
const code = (source: string, outputs = "[]") => `{"cell_type":"code","id":"c","metadata":{},"execution_count":null,"source":${source},"outputs":${outputs}}`;
const markdown = (source: string) => `{"cell_type":"markdown","id":"m","metadata":{},"source":${source}}`;

function refusal(text: string | Uint8Array): IpynbError {
  try {
    parseIpynb(text);
  } catch (error) {
    assert.ok(error instanceof IpynbError, `an IpynbError, got ${String(error)}`);
    return error;
  }
  assert.fail("the file was accepted");
}

describe("lone surrogates in an imported file", () => {
  it("are refused with the field, the surrogate and its position", () => {
    const cases: Array<[string, string, string, string]> = [
      ["a source", file(`${markdown('"x"')},${markdown('"y"')},${markdown('"z"')},${code('"a\\ud800b"')}`), "cells[3].source", "\\ud800) at character 1"],
      ["a source line", file(code('["ok\\n", "a\\udc00"]')), "cells[0].source", "\\udc00) at character 4"],
      ["a high surrogate ending the text", file(code('["x", "\\ud83d"]')), "cells[0].source", "\\ud83d) at character 1"],
      ["stream text", file(code('""', '[{"output_type":"stream","name":"stdout","text":["fine\\n","x\\ud800"]}]')), "cells[0].outputs[0].text", "at character 6"],
      ["a mime value", file(code('""', '[{"output_type":"display_data","metadata":{},"data":{"text/plain":"\\udfff"}}]')), "cells[0].outputs[0].data.text/plain", "at character 0"],
      ["a mime type", file(code('""', '[{"output_type":"display_data","metadata":{},"data":{"text/x\\ud800":"v"}}]')), "cells[0].outputs[0].data.text/x\\ud800", "at character 6"],
      ["a traceback line", file(code('""', '[{"output_type":"error","ename":"E","evalue":"v","traceback":["ok","\\ud800"]}]')), "cells[0].outputs[0].traceback[1]", "at character 0"],
      ["the title", file(markdown('""'), '{"mgpulab":{"title":"t\\udc00"}}'), "metadata.mgpulab.title", "at character 1"],
      ["a template value", file(`{"cell_type":"code","id":"c","metadata":{"mgpulab":{"template":{"id":"a/b","parameters":{"p":"\\ud800"}}}},"source":"","outputs":[]}`), "cells[0].metadata.mgpulab.template.parameters.p", "at character 0"],
    ];
    for (const [what, text, path, where] of cases) {
      const error = refusal(text);
      assert.equal(error.path, path, what);
      assert.ok(error.reason.startsWith("contains a lone UTF-16 surrogate ("), what);
      assert.ok(error.reason.includes(where), `${what}: ${error.reason}`);
      assert.doesNotMatch(error.message, /[\ud800-\udfff]/, `${what}: the message itself is valid text`);
    }
  });

  it("accepts pairs, also split across two lines of a multiline string, and keeps them exactly", () => {
    const imported = parseIpynb(file(code('["a\\ud83d", "\\ude42b\\n", "\\ud83d\\ude42"]', '[{"output_type":"stream","name":"stdout","text":["\\ud83d", "\\ude42"]}]')));
    assert.equal(imported.cells[0]!.source, "a🙂b\n🙂");
    assert.deepEqual(imported.cells[0]!.outputs, [{ kind: "stream", name: "stdout", text: "🙂" }]);
  });

  it("keeps a lone surrogate inside JSON mime data exactly, as the escape it is", () => {
    const imported = parseIpynb(file(code('""', '[{"output_type":"display_data","metadata":{},"data":{"application/json":{"k":"\\ud800"}}}]')));
    const output = imported.cells[0]!.outputs![0];
    assert.ok(output?.kind === "display");
    assert.equal(output.data["application/json"], '{"k":"\\ud800"}');
    assert.equal((JSON.parse(output.data["application/json"]!) as { k: string }).k, "\ud800");
  });

  it("refuses a surrogate encoded as UTF-8 bytes, naming the byte", () => {
    const bytes = Buffer.concat([Buffer.from(file(code('"ab'))), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"]}')]);
    assert.match(refusal(bytes).message, new RegExp(`not UTF-8 text \\(an invalid byte sequence at byte ${bytes.indexOf(0xed)}\\)`));
    assert.equal(firstInvalidUtf8(Buffer.from("ok █ 🙂")), -1);
    assert.equal(firstInvalidUtf8(Uint8Array.from([0x61, 0xc0, 0x80])), 1, "an overlong form");
    assert.equal(firstInvalidUtf8(Uint8Array.from([0xf0, 0x9f, 0x99])), 0, "a sequence cut short");
    assert.equal(firstInvalidUtf8(Uint8Array.from([0xf4, 0x90, 0x80, 0x80])), 0, "past U+10FFFF");
  });
});
