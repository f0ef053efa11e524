/**
 * A person as people recognise them: an avatar of their initials on a colour of their own (from
 * their id, so it is the same on every page; no image is fetched) and their name. The avatar is
 * decorative: the name is what is read.
 */
import type { Person } from "../search/operations";

/** Up to two initials: "Ada Lovelace" → "AL", "grace" → "G". */
export function initialsOf(name: string): string {
  const words = name.trim().split(/[\s._@-]+/).filter(Boolean);
  const letters = (words.length > 1 ? [words[0]!, words[words.length - 1]!] : words).map((word) => [...word][0]!.toUpperCase());
  return letters.join("") || "?";
}

/** A hue per id (FNV-1a), at a lightness the white initials keep 4.5:1 contrast on. */
function hueOf(id: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < id.length; index++) hash = Math.imul(hash ^ id.charCodeAt(index), 0x01000193);
  return (hash >>> 0) % 360;
}

export function PersonName({ person }: { person: Person }) {
  return (
    <span className="person">
      <span className="avatar" aria-hidden="true" style={{ backgroundColor: `hsl(${hueOf(person.id)} 45% 30%)` }}>
        {initialsOf(person.name)}
      </span>
      <span className="person-name">{person.name}</span>
    </span>
  );
}
