import NotebookList from "@/components/NotebookList";

export default function HomePage() {
  return (
    <main className="home">
      <h1>Multi-GPU Lab</h1>
      <p className="home-lead">
        Notebooks for guided experiments on PyTorch multi-GPU training: state a claim, predict, run, and read the measured
        verdict.
      </p>
      <NotebookList />
    </main>
  );
}
