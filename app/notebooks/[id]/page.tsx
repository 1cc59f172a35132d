import { notFound } from "next/navigation";
import Notebook from "@/components/Notebook";
import { MAX_ID_CHARS } from "@/server/core/limits";

interface Props {
  params: Promise<{ id: string }>;
}

export default async function NotebookPage({ params }: Props) {
  const { id } = await params;
  if (id.length > MAX_ID_CHARS || !/^[A-Za-z0-9_-]+$/.test(id)) notFound();
  return <Notebook notebookId={id} />;
}
