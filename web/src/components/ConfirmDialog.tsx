/**
 * A question that needs an answer before something is undone for good (deleting a document).
 * A native modal `<dialog>`: the browser traps focus inside it, makes the page behind it inert
 * for screen readers and closes it on Escape; focus goes back to the button that opened it. The
 * safe answer (Cancel) has the focus first, so Enter alone never destroys anything.
 */
import { useEffect, useId, useRef, type ReactNode } from "react";

export interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children: ReactNode;
  /** The destructive action's words, e.g. "Delete handover.md". */
  confirmLabel: string;
  /** While the action runs: the buttons wait and say so. */
  busy?: boolean;
  onConfirm(): void;
  onCancel(): void;
}

export function ConfirmDialog({ open, title, children, confirmLabel, busy = false, onConfirm, onCancel }: ConfirmDialogProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  const bodyId = useId();

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      element.showModal();
      cancel.current?.focus();
    } else if (!open && element.open) {
      element.close();
    }
  }, [open]);

  return (
    <dialog
      ref={dialog}
      className="confirm-dialog"
      aria-labelledby={titleId}
      aria-describedby={bodyId}
      // Escape closes the dialog natively; the page's state must follow.
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) onCancel();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      <div id={bodyId}>{children}</div>
      <p className="confirm-actions">
        <button ref={cancel} type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="button" className="danger" onClick={onConfirm} disabled={busy}>
          {busy ? "Working…" : confirmLabel}
        </button>
      </p>
    </dialog>
  );
}
