import type { Metadata } from "next";
import PageBar from "@/components/shell/PageBar";
import Hosts from "@/components/hosts/Hosts";

export const metadata: Metadata = { title: "Hosts · Multi-GPU Lab" };

export default function HostsPage() {
  return (
    <main className="home home-wide">
      <PageBar />
      <h1>Hosts</h1>
      <p className="home-lead">
        Where notebook kernels run: each host&apos;s link, its agent, its Python, torch and CUDA, its GPUs with who holds each
        since when (or whom a free one is reserved for), and the queue of kernels waiting for GPUs. &quot;Check now&quot;
        connects to a host and asks it.
      </p>
      <Hosts />
    </main>
  );
}
