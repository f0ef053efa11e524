/** Placeholder: built in the issue-21 work that owns this page. */
export default function ConversationPage() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">ConversationPage</h1>
    </section>
  );
}
