"use client";
/**
 * "Copy": puts a link on the clipboard and says whether it did; where the
 * browser refuses (no permission, no secure context), it says to select the
 * link, which stands beside it.
 */
import { useState } from "react";

interface Props {
  url: string;
  testId: string;
}

export default function CopyLinkButton({ url, testId }: Props) {
  const [copied, setCopied] = useState<"copied" | "failed" | null>(null);
  const copy = () => {
    navigator.clipboard.writeText(url).then(
      () => setCopied("copied"),
      () => setCopied("failed"),
    );
  };
  return (
    <button type="button" className="button button-small" data-testid={testId} onClick={copy}>
      {copied === "copied" ? "Copied" : copied === "failed" ? "Copy failed: select the link" : "Copy"}
    </button>
  );
}
