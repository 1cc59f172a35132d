import type { Metadata } from "next";
import JoinForm from "@/components/workshops/JoinForm";

export const metadata: Metadata = { title: "Join a workshop · Multi-GPU Lab" };

interface Props {
  params: Promise<{ code: string }>;
}

export default async function JoinPage({ params }: Props) {
  const { code } = await params;
  return (
    <main className="home auth-page">
      <h1>Join a workshop</h1>
      <p className="home-lead">
        Workshop code <code data-testid="join-code">{code}</code>. No account needed: type your name and you get your own copies of the
        workshop&apos;s scenarios.
      </p>
      <JoinForm code={code} />
    </main>
  );
}
