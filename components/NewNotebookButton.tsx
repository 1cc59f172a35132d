"use client";
/** Opens a fresh notebook under a new random id (the server creates it on first open). */
import { useRouter } from "next/navigation";
import { newNotebookId } from "./model/ids";

export default function NewNotebookButton() {
  const router = useRouter();
  return (
    <button
      type="button"
      className="button button-primary"
      data-testid="new-notebook"
      onClick={() => router.push(`/notebooks/${newNotebookId()}`)}
    >
      New notebook
    </button>
  );
}
