import type { Metadata } from "next";
import PageBar from "@/components/shell/PageBar";
import Workshops from "@/components/workshops/Workshops";

export const metadata: Metadata = { title: "Workshops · Multi-GPU Lab" };

export default function WorkshopsPage() {
  return (
    <main className="home home-wide">
      <PageBar />
      <h1>Workshops</h1>
      <p className="home-lead">
        A workshop gives each participant their own copies of the scenarios you pick. Share its join link: participants type a
        name, no account needed. You can open and run every participant&apos;s notebook; they see only their own.
      </p>
      <Workshops />
    </main>
  );
}
