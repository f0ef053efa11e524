/**
 * The documents pages' mutations (knowledge-base subgraph): delete a document, and share it with
 * one of the owner's teams or make it private. Both are the owner's alone; the pages offer them
 * only where `viewerIsOwner` is true, and the server refuses anyone else all the same.
 */
import { gql } from "@apollo/client";
import type { TypedDocumentNode } from "@apollo/client";

export const DELETE_DOCUMENT: TypedDocumentNode<{ deleteDocument: { id: string } | null }, { id: string }> = gql`
  mutation DeleteDocument($id: ID!) {
    deleteDocument(id: $id) {
      id
    }
  }
`;

/** A team as the pages name it: its id (what sharing sends) and its name (what a person reads). */
export interface NamedTeam {
  id: string;
  name: string;
}

export const SET_DOCUMENT_SHARING: TypedDocumentNode<{ setDocumentSharing: { id: string; sharedWithTeamId: string | null; sharedWithTeam: NamedTeam | null } | null }, { id: string; teamId: string | null }> = gql`
  mutation SetDocumentSharing($id: ID!, $teamId: ID) {
    setDocumentSharing(id: $id, teamId: $teamId) {
      id
      sharedWithTeamId
      sharedWithTeam {
        id
        name
      }
    }
  }
`;

/** The caller's teams with their names: whom a document may be shared with. */
export const VIEWER_TEAMS: TypedDocumentNode<{ viewerTeams: NamedTeam[] | null }, Record<string, never>> = gql`
  query ViewerTeams {
    viewerTeams {
      id
      name
    }
  }
`;
