"use client";
/**
 * One cell output: stream, result/display data, error with its
 * ANSI-coloured traceback, the marker for output elided by the server, or
 * the watchdog's hang report.
 */
import type { CellOutput } from "../../server/core/protocol/notebook-model";
import { ansiToHtml } from "../workshops/model/console-text";
import HangReport from "./HangReport";
import { formatBytes } from "../shell/model/format";
import { assertNever } from "../../server/core/assert-never";
import MimeOutput from "./MimeOutput";
import type { RunActions } from "./run-actions";
import StreamOutput from "./StreamOutput";

interface Props {
  output: CellOutput;
  actions: RunActions | null;
  running: boolean;
}

export default function OutputItem({ output, actions, running }: Props) {
  switch (output.kind) {
    case "stream":
      return <StreamOutput name={output.name} text={output.text} />;
    case "result":
      return (
        <div className="output-row">
          <div className="prompt-box output-prompt">[{output.executionCount}]:</div>
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
    case "hang":
      return <HangReport report={output} actions={actions} running={running} />;
    default:
      return assertNever(output);
  }
}
