/** The class summary of a workshop as a CSV download (the caller has checked it is the asker's workshop). */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Workshops } from "../workshops/workshops";
import { replyError, sendError } from "./json-reply";

export function serveWorkshopSummary(req: IncomingMessage, res: ServerResponse, workshops: Workshops, workshopId: string, onError: (error: unknown) => void): void {
  if (req.method !== "GET") return void sendError(res, "invalid", "use GET", 405);
  workshops.summaryCsv(workshopId).then(
    ({ fileName, csv }) => {
      res.writeHead(200, { "Content-Type": "text/csv; charset=utf-8", "Content-Disposition": `attachment; filename="${fileName}"`, "Cache-Control": "no-store" });
      res.end(csv);
    },
    (error: unknown) => replyError(res, error, onError, "export the class summary"),
  );
}
