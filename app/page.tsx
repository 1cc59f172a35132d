import Link from "next/link";
import NewNotebookButton from "@/components/NewNotebookButton";

export default function HomePage() {
  return (
    <main className="home">
      <h1>Multi-GPU Lab</h1>
      <p className="home-lead">
        Notebooks for guided experiments on PyTorch multi-GPU training: state a claim, predict, run, and read the measured
        verdict.
      </p>
      <div className="home-actions">
        <Link href="/notebooks/scratch" className="button" data-testid="open-scratch">
          Open the scratch notebook
        </Link>
        <NewNotebookButton />
      </div>
    </main>
  );
}
