/** Placeholder: built in the issue-21 work that owns this page. */
export default function DocumentPage() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">DocumentPage</h1>
    </section>
  );
}
