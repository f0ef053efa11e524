/**
 * Said under an upload whose bytes were already here (the upload's `sameContent`): which earlier
 * copies the person may see, and a choice. Replacing deletes the earlier copies they own and
 * shares the new upload with the team the newest of them was shared with, so teammates do not
 * lose it; where none is theirs (a teammate shared it), they may remove their own new copy
 * instead; or they keep both. Nothing is deleted until a button says so.
 */
import { useMutation } from "@apollo/client/react";
import { useState } from "react";
import { Link } from "react-router";
import { ErrorMessage } from "../components/ErrorMessage";
import { formatDateTime } from "./format";
import { DELETE_DOCUMENT, SET_DOCUMENT_SHARING } from "./operations";
import type { SameContentDocument, UploadedDocument } from "./upload";
import "./manage.css";

export interface DuplicateNoticeProps {
  upload: UploadedDocument;
  /** After a copy was deleted: the page refreshes its list. */
  onChanged(): void;
}

export function DuplicateNotice({ upload, onChanged }: DuplicateNoticeProps) {
  const [outcome, setOutcome] = useState<string | null>(null);
  const [deleteDocument, { loading, error }] = useMutation(DELETE_DOCUMENT, {
    update(cache, { data }) {
      const id = data?.deleteDocument?.id;
      if (id) cache.evict({ id: cache.identify({ __typename: "Document", id }) });
    },
  });
  const [setSharing, sharing] = useMutation(SET_DOCUMENT_SHARING);
  const earlier = upload.sameContent;
  if (earlier.length === 0) return null;
  const mine = earlier.filter((document) => document.viewerIsOwner);

  async function replace() {
    // The new upload takes the earlier copy's place, sharing included (uploads start private).
    const team = mine.find((document) => document.sharedWithTeamId)?.sharedWithTeamId ?? null;
    // The sharing's answer names the team (teams are named by the conversations subgraph).
    let teamName: string | null = null;
    if (team) {
      const shared = await setSharing({ variables: { id: upload.id, teamId: team } }).catch(() => null);
      if (!shared?.data?.setDocumentSharing) return;
      teamName = shared.data.setDocumentSharing.sharedWithTeam?.name ?? team;
    }
    const copies = mine.length === 1 ? "copy was" : `${mine.length} copies were`;
    await remove(mine, `Replaced: the earlier ${copies} deleted and ${upload.fileName} stays${teamName ? `, shared with ${teamName} as before` : ""}.`);
  }

  async function remove(documents: { id: string }[], said: string) {
    for (const document of documents) {
      const result = await deleteDocument({ variables: { id: document.id } }).catch(() => null);
      if (!result?.data?.deleteDocument) return;
    }
    setOutcome(said);
    onChanged();
  }

  return (
    <div className="duplicate-notice" data-testid="duplicate-notice">
      <p>
        <strong>This file is already here</strong>: the same content as <EarlierCopies documents={earlier} />.
      </p>
      {outcome ? (
        <p role="status">{outcome}</p>
      ) : (
        <p className="manage-actions">
          {mine.length > 0 ? (
            <button type="button" className="primary" disabled={loading || sharing.loading} onClick={() => void replace()}>
              Replace the earlier {mine.length === 1 ? "copy" : "copies"}
            </button>
          ) : (
            <button type="button" disabled={loading} onClick={() => void remove([upload], `Removed your new copy: ${upload.fileName} was deleted.`)}>
              Remove this upload
            </button>
          )}
          <button type="button" disabled={loading} onClick={() => setOutcome("Kept both copies.")}>
            Keep both
          </button>
        </p>
      )}
      {error ? <ErrorMessage error={error} /> : null}
      {sharing.error ? <ErrorMessage error={sharing.error} /> : null}
    </div>
  );
}

function EarlierCopies({ documents }: { documents: SameContentDocument[] }) {
  return (
    <>
      {documents.map((document, index) => (
        <span key={document.id}>
          {index > 0 ? ", " : null}
          <Link to={`/documents/${document.id}`}>{document.fileName}</Link> ({document.viewerIsOwner ? "yours" : "shared with you"}, uploaded {formatDateTime(document.createdAt)})
        </span>
      ))}
    </>
  );
}
