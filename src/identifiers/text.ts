// Character-class helpers shared by the name, city, region and street normalisers.
// Everything works on NFC text so that `é` typed as e + U+0301 hashes like precomposed `é`.

/** NFC, lowercase, trimmed. */
export function baseText(raw: string): string {
  return raw.normalize('NFC').toLowerCase().trim();
}

/** Deletes digits, punctuation and symbols; keeps letters (any script), combining marks and spaces. */
export function lettersAndSpaces(s: string): string {
  return collapseSpaces(s.replace(/[^\p{L}\p{M}\s]/gu, ''));
}

/** Deletes punctuation and symbols; keeps letters, marks, digits and spaces. */
export function withoutPunctuation(s: string): string {
  return collapseSpaces(s.replace(/[\p{P}\p{S}]/gu, ''));
}

/** Keeps only letters, marks and digits: no spaces, no punctuation. */
export function alphanumeric(s: string): string {
  return s.replace(/[^\p{L}\p{M}\p{N}]/gu, '');
}

export function collapseSpaces(s: string): string {
  return s.replace(/\s+/gu, ' ').trim();
}

/** `''` → null, so normalisers can end with `return nonEmpty(x)`. */
export function nonEmpty(s: string): string | null {
  return s.length > 0 ? s : null;
}
