/**
 * "Delete" for a document the caller owns: asks in a modal dialog (ConfirmDialog), then sends
 * `deleteDocument` and drops the document from Apollo's cache, so every list and view that
 * showed it forgets it at once; the page's `onDeleted` moves on (a list refetches its page, the
 * document's own page goes back to the list). A refusal is shown in words, in the dialog.
 */
import { useMutation } from "@apollo/client/react";
import { useState } from "react";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { ErrorMessage } from "../components/ErrorMessage";
import { DELETE_DOCUMENT } from "./operations";
import "./manage.css";

export interface DeleteDocumentButtonProps {
  document: { id: string; fileName: string };
  onDeleted?(id: string): void;
  /** The button's words; "Delete" by default (the file name is in its accessible name anyway). */
  label?: string;
}

export function DeleteDocumentButton({ document, onDeleted, label = "Delete" }: DeleteDocumentButtonProps) {
  const [asking, setAsking] = useState(false);
  const [deleteDocument, { loading, error, reset }] = useMutation(DELETE_DOCUMENT, {
    update(cache, { data }) {
      const id = data?.deleteDocument?.id;
      if (!id) return;
      cache.evict({ id: cache.identify({ __typename: "Document", id }) });
      cache.gc();
    },
  });

  async function confirm() {
    const result = await deleteDocument({ variables: { id: document.id } }).catch(() => null);
    if (result?.data?.deleteDocument) {
      setAsking(false);
      onDeleted?.(document.id);
    }
  }

  return (
    <>
      <button type="button" aria-label={`${label} ${document.fileName}`} onClick={() => (reset(), setAsking(true))}>
        {label}
      </button>
      <ConfirmDialog
        open={asking}
        title={`Delete ${document.fileName}?`}
        confirmLabel="Delete for good"
        busy={loading}
        onConfirm={() => void confirm()}
        onCancel={() => setAsking(false)}
      >
        <p>The document, its passages and its search index go at once, for you and for everyone it is shared with. This cannot be undone.</p>
        {error ? <ErrorMessage error={error} /> : null}
      </ConfirmDialog>
    </>
  );
}
