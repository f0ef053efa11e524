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

export const SET_DOCUMENT_SHARING: TypedDocumentNode<{ setDocumentSharing: { id: string; sharedWithTeamId: string | null } | null }, { id: string; teamId: string | null }> = gql`
  mutation SetDocumentSharing($id: ID!, $teamId: ID) {
    setDocumentSharing(id: $id, teamId: $teamId) {
      id
      sharedWithTeamId
    }
  }
`;
