/**
 * The chart benchmark page's entry (bundled by ./serve.ts, never by the
 * lab's Next build): the lab's global styles and tokens, then the bench.
 */
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import ChartsBench from "./ChartsBench";
import "../../../app/globals.css";

const root = document.getElementById("root");
if (!root) throw new Error("the bench page has no #root");
createRoot(root).render(
  <StrictMode>
    <ChartsBench />
  </StrictMode>,
);
