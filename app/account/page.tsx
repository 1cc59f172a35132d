import type { Metadata } from "next";
import ChangePassword from "@/components/account/ChangePassword";
import PageBar from "@/components/shell/PageBar";

export const metadata: Metadata = { title: "Account · Multi-GPU Lab" };

export default function AccountPage() {
  return (
    <main className="home">
      <PageBar />
      <h1>Account</h1>
      <p className="home-lead">Change your password. Your other sessions (other browsers, other devices) are signed out; this one stays signed in.</p>
      <ChangePassword />
    </main>
  );
}
