import NotebookList from "@/components/notebooks/NotebookList";
import PageBar from "@/components/shell/PageBar";

export default function HomePage() {
  return (
    <main className="home">
      <PageBar>
        <h1>Multi-GPU Lab</h1>
      </PageBar>
      <p className="home-lead">
        Notebooks for guided experiments on PyTorch multi-GPU training: state a claim, predict, run, and read the measured
        verdict.
      </p>
      <NotebookList />
    </main>
  );
}
