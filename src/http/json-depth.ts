// Nesting depth of JSON text, measured before JSON.parse builds anything: a few megabytes of
// opening brackets cost the parser seconds and memory, this scan one pass over the characters,
// stopping at the first bracket past the limit. Brackets inside strings do not count.

/** Character codes the scans of JSON text look for. */
export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

/** Index of the quote that closes the string opened at `open`, or -1 when none does. */
export function stringEnd(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return -1;
    let slash = at - 1;
    while (text.charCodeAt(slash) === BACKSLASH) slash--;
    if ((at - 1 - slash) % 2 === 0) return at;
  }
}

/**
 * Whether `text` holds at most `max` opening brackets, strings included: then nothing in it
 * can nest deeper than `max`. Counted with indexOf (native scans), it spares the common
 * small body nestedDeeperThan's walk over every character.
 */
function fewOpenings(text: string, max: number): boolean {
  let n = 0;
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) if (++n > max) return false;
  for (let i = text.indexOf('['); i >= 0; i = text.indexOf('[', i + 1)) if (++n > max) return false;
  return true;
}

/**
 * Whether `text` opens more than `maxDepth` objects and arrays inside one another: the
 * same measure as the JSON-safety walk's maxDepth. Invalid JSON is left to the parser.
 * Strings are skipped with indexOf, so long values cost little.
 * @example nestedDeeperThan('{"a":[[1]]}', 2) // → true (three levels)
 */
export function nestedDeeperThan(text: string, maxDepth: number): boolean {
  if (fewOpenings(text, maxDepth)) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      if (i < 0) return false;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
