/**
 * Whom a document is shared with, changeable by its owner: "Only me" or one of the owner's teams
 * (the teams their token names), applied with a button rather than on every change of the select,
 * so a keyboard user moving through the options shares nothing by accident. Sends
 * `setDocumentSharing`; Apollo's cache updates the document where it is shown, and the result
 * is announced.
 */
import { useMutation } from "@apollo/client/react";
import { useId, useState } from "react";
import { ErrorMessage } from "../components/ErrorMessage";
import { currentToken, tokenClaims } from "../session";
import { SET_DOCUMENT_SHARING } from "./operations";
import "./manage.css";

const PRIVATE = "";

export function sharingWords(teamId: string | null): string {
  return teamId ? `Shared with team ${teamId}` : "Only you";
}

export function SharingControl({ document }: { document: { id: string; fileName: string; sharedWithTeamId: string | null } }) {
  const selectId = useId();
  const teams = tokenClaims(currentToken())?.teams ?? [];
  // A team the document is shared with stays an option even if the token no longer names it.
  const options = document.sharedWithTeamId && !teams.includes(document.sharedWithTeamId) ? [...teams, document.sharedWithTeamId] : teams;
  const [choice, setChoice] = useState(document.sharedWithTeamId ?? PRIVATE);
  const [done, setDone] = useState<string | null>(null);
  const [setSharing, { loading, error }] = useMutation(SET_DOCUMENT_SHARING);
  const current = document.sharedWithTeamId ?? PRIVATE;

  async function apply() {
    setDone(null);
    const result = await setSharing({ variables: { id: document.id, teamId: choice === PRIVATE ? null : choice } }).catch(() => null);
    const saved = result?.data?.setDocumentSharing;
    if (saved) setDone(saved.sharedWithTeamId ? `${document.fileName} is now shared with team ${saved.sharedWithTeamId}.` : `${document.fileName} is now private: only you see it.`);
  }

  return (
    <div>
      <p className="sharing-control">
        <label htmlFor={selectId}>Shared with</label>
        <select id={selectId} value={choice} onChange={(event) => setChoice(event.target.value)} disabled={loading}>
          <option value={PRIVATE}>Only me (private)</option>
          {options.map((team) => (
            <option key={team} value={team}>
              Team {team}
            </option>
          ))}
        </select>
        <button type="button" onClick={() => void apply()} disabled={loading || choice === current} aria-label={`Save sharing of ${document.fileName}`}>
          {loading ? "Saving…" : "Save"}
        </button>
      </p>
      {options.length === 0 ? <p className="hint">Your token names no team, so this document can only be private.</p> : null}
      <p role="status" className="hint">
        {done}
      </p>
      {error ? <ErrorMessage error={error} /> : null}
    </div>
  );
}
