"use client";
/**
 * One cell output: stream, result/display data, error with its
 * ANSI-coloured traceback, or the marker for output elided by the server.
 */
import type { CellOutput } from "../server/protocol/notebook-model";
import { ansiToHtml } from "./model/console-text";
import { formatBytes } from "./model/format";
import { assertNever } from "./model/notebook-state";
import MimeOutput from "./MimeOutput";
import StreamOutput from "./StreamOutput";

interface Props {
  output: CellOutput;
}

export default function OutputItem({ output }: Props) {
  switch (output.kind) {
    case "stream":
      return <StreamOutput name={output.name} text={output.text} />;
    case "result":
      return (
        <div className="output-row">
          <div className="output-prompt">[{output.executionCount}]:</div>
          <MimeOutput data={output.data} />
        </div>
      );
    case "display":
      return <MimeOutput data={output.data} />;
    case "error": {
      const traceback = output.traceback.map((line) => (line.endsWith("\n") ? line : `${line}\n`)).join("");
      const text = traceback.trim() === "" ? `${output.ename}: ${output.evalue}` : traceback;
      return (
        <pre
          className="output-error"
          data-testid="output-error"
          data-ename={output.ename}
          dangerouslySetInnerHTML={{ __html: ansiToHtml(text) }}
        />
      );
    }
    case "elided":
      return (
        <div className="output-elided" data-testid="output-elided" data-elided-bytes={output.elidedBytes}>
          … {formatBytes(output.elidedBytes)} of output elided …
        </div>
      );
    default:
      return assertNever(output);
  }
}
