/** Placeholder: built in the issue-21 work that owns this page. */
export default function AnalyticsPage() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">AnalyticsPage</h1>
    </section>
  );
}
