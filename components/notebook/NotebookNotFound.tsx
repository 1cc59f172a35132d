/** An id the server does not know: say so plainly and lead back to the list. */
import Link from "next/link";

import "./NotebookNotFound.css";

interface Props {
  notebookId: string;
  reason: string;
}

export default function NotebookNotFound({ notebookId, reason }: Props) {
  return (
    <main className="not-found" data-testid="notebook-not-found">
      <h1>Notebook not found</h1>
      <p>
        There is no notebook <code>{notebookId}</code> on this server. It may have been deleted for good, or the link is wrong.
      </p>
      <p className="not-found-reason">Server said: {reason}</p>
      <Link href="/" className="button button-primary" data-testid="back-to-list">
        Back to the notebook list
      </Link>
    </main>
  );
}
