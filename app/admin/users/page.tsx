import type { Metadata } from "next";
import PageBar from "@/components/shell/PageBar";
import Users from "@/components/admin/Users";

export const metadata: Metadata = { title: "Users · Multi-GPU Lab" };

export default function UsersPage() {
  return (
    <main className="home home-wide">
      <PageBar />
      <h1>Users</h1>
      <p className="home-lead">
        Who may sign in to this lab, and as what: admins manage users, members run notebooks, facilitators run workshops. Removing
        a user ends their sessions at once; their notebooks stay.
      </p>
      <Users />
    </main>
  );
}
