import type { Metadata } from "next";
import Link from "next/link";
import RunningKernels from "@/components/RunningKernels";

export const metadata: Metadata = { title: "Running kernels · Multi-GPU Lab" };

export default function KernelsPage() {
  return (
    <main className="home home-wide">
      <Link href="/" className="brand" data-testid="back-to-list">
        ← Notebooks
      </Link>
      <h1>Running kernels</h1>
      <p className="home-lead">
        Every notebook kernel running on this lab. Shutting one down keeps its notebook as it is; running a cell there starts a
        new kernel.
      </p>
      <RunningKernels />
    </main>
  );
}
