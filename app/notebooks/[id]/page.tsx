import { notFound } from "next/navigation";
import Notebook from "@/components/notebook/Notebook";
import { MAX_ID_CHARS } from "@/server/core/limits";

interface Props {
  params: Promise<{ id: string }>;
  searchParams: Promise<{ peek?: string | string[] }>;
}

export default async function NotebookPage({ params, searchParams }: Props) {
  const { id } = await params;
  if (id.length > MAX_ID_CHARS || !/^[A-Za-z0-9_-]+$/.test(id)) notFound();
  // `?peek=1`: a facilitator's look into a participant's notebook, shown read-only.
  const { peek } = await searchParams;
  return <Notebook notebookId={id} peek={peek === "1"} />;
}
