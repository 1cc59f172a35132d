"use client";
/**
 * A page's last failure over its list ("Loading the hosts failed: …"), with
 * a button to dismiss it; nothing while there is none. `testId` names it for
 * the page's tests (users-error, hosts-error…).
 */
interface Props {
  error: string | null;
  testId: string;
  onDismiss(): void;
}

export default function ListError({ error, testId, onDismiss }: Props) {
  if (error === null) return null;
  return (
    <div className="list-error" data-testid={testId} role="alert">
      <span>{error}</span>
      <button type="button" className="notice-close" aria-label="Dismiss" onClick={onDismiss}>
        ×
      </button>
    </div>
  );
}
