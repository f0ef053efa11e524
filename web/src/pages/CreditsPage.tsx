/** Placeholder: built in the issue-21 work that owns this page. */
export default function CreditsPage() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">CreditsPage</h1>
    </section>
  );
}
