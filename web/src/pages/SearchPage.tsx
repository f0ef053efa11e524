/** Placeholder: built in the issue-21 work that owns this page. */
export function SearchPage() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Search</h1>
    </section>
  );
}
