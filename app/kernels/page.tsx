import type { Metadata } from "next";
import PageBar from "@/components/shell/PageBar";
import RunningKernels from "@/components/admin/RunningKernels";

export const metadata: Metadata = { title: "Running kernels · Multi-GPU Lab" };

export default function KernelsPage() {
  return (
    <main className="home home-wide">
      <PageBar />
      <h1>Running kernels</h1>
      <p className="home-lead">
        Every notebook kernel running on this lab. Shutting one down keeps its notebook as it is; running a cell there starts a
        new kernel.
      </p>
      <RunningKernels />
    </main>
  );
}
