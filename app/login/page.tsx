import type { Metadata } from "next";
import LoginForm from "@/components/account/LoginForm";
import { safeNext } from "@/components/shell/model/auth-client";

export const metadata: Metadata = { title: "Sign in · Multi-GPU Lab" };

interface Props {
  searchParams: Promise<{ next?: string | string[] }>;
}

export default async function LoginPage({ searchParams }: Props) {
  const { next } = await searchParams;
  return (
    <main className="home auth-page">
      <h1>Multi-GPU Lab</h1>
      <p className="home-lead">Sign in with the account an admin made for you. Joining a workshop? Open the link your facilitator gave you.</p>
      <LoginForm next={safeNext(next)} />
    </main>
  );
}
