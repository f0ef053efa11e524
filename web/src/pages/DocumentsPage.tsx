/** Placeholder: built in the issue-21 work that owns this page. */
export default function DocumentsPage() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">DocumentsPage</h1>
    </section>
  );
}
