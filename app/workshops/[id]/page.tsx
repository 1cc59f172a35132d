import type { Metadata } from "next";
import { notFound } from "next/navigation";
import PageBar from "@/components/shell/PageBar";
import WorkshopConsole from "@/components/workshops/WorkshopConsole";
import { MAX_ID_CHARS } from "@/server/core/limits";

export const metadata: Metadata = { title: "Workshop console · Multi-GPU Lab" };

interface Props {
  params: Promise<{ id: string }>;
}

/** The facilitator console of one workshop; the server answers for whose it is. */
export default async function WorkshopConsolePage({ params }: Props) {
  const { id } = await params;
  if (id.length > MAX_ID_CHARS || !/^[A-Za-z0-9_-]+$/.test(id)) notFound();
  return (
    <main className="home home-wide">
      <PageBar />
      <WorkshopConsole workshopId={id} />
    </main>
  );
}
