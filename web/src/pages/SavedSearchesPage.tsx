/** Placeholder: built in the issue-21 work that owns this page. */
export default function SavedSearchesPage() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">SavedSearchesPage</h1>
    </section>
  );
}
