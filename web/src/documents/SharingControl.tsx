/**
 * Whom a document is shared with, changeable by its owner: "Only me" or one of the owner's teams
 * (the teams their token names, by name: `viewerTeams`), applied with a button rather than on every change of the select,
 * so a keyboard user moving through the options shares nothing by accident. Sends
 * `setDocumentSharing`; Apollo's cache updates the document where it is shown, and the result
 * is announced.
 */
import { useMutation, useQuery } from "@apollo/client/react";
import { useId, useState } from "react";
import { ErrorMessage } from "../components/ErrorMessage";
import { SET_DOCUMENT_SHARING, VIEWER_TEAMS, type NamedTeam } from "./operations";
import "./manage.css";

const PRIVATE = "";

export function sharingWords(team: NamedTeam | null): string {
  return team ? `Shared with ${team.name}` : "Only you";
}

export function SharingControl({ document }: { document: { id: string; fileName: string; sharedWithTeamId: string | null; sharedWithTeam: NamedTeam | null } }) {
  const selectId = useId();
  const { data: viewer, loading: teamsLoading } = useQuery(VIEWER_TEAMS);
  const teams = viewer?.viewerTeams ?? [];
  // A team the document is shared with stays an option even if the token no longer names it.
  const shared = document.sharedWithTeam;
  const options = shared && !teams.some((team) => team.id === shared.id) ? [...teams, shared] : teams;
  const [choice, setChoice] = useState(document.sharedWithTeamId ?? PRIVATE);
  const [done, setDone] = useState<string | null>(null);
  const [setSharing, { loading, error }] = useMutation(SET_DOCUMENT_SHARING);
  const current = document.sharedWithTeamId ?? PRIVATE;

  async function apply() {
    setDone(null);
    const result = await setSharing({ variables: { id: document.id, teamId: choice === PRIVATE ? null : choice } }).catch(() => null);
    const saved = result?.data?.setDocumentSharing;
    if (saved) setDone(saved.sharedWithTeam ? `${document.fileName} is now shared with ${saved.sharedWithTeam.name}.` : `${document.fileName} is now private: only you see it.`);
  }

  return (
    <div>
      <p className="sharing-control">
        <label htmlFor={selectId}>Shared with</label>
        <select id={selectId} value={choice} onChange={(event) => setChoice(event.target.value)} disabled={loading}>
          <option value={PRIVATE}>Only me (private)</option>
          {options.map((team) => (
            <option key={team.id} value={team.id}>
              {team.name}
            </option>
          ))}
        </select>
        <button type="button" onClick={() => void apply()} disabled={loading || choice === current} aria-label={`Save sharing of ${document.fileName}`}>
          {loading ? "Saving…" : "Save"}
        </button>
      </p>
      {options.length === 0 && !teamsLoading ? <p className="hint">Your token names no team, so this document can only be private.</p> : null}
      <p role="status" className="hint">
        {done}
      </p>
      {error ? <ErrorMessage error={error} /> : null}
    </div>
  );
}
