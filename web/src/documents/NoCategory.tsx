/** A document without a category: a dash to the eye, words to a screen reader (never "None", which reads like a category of that name). */
export function NoCategory() {
  return (
    <>
      <span aria-hidden="true" className="hint">
        —
      </span>
      <span className="visually-hidden">No category</span>
    </>
  );
}
