// Which lines of two texts differ, for the rules diff's side-by-side view: a longest common
// subsequence of lines; what is not in it is marked removed (before) or added (after). The two
// sides come back as many rows each, a common line facing itself and a changed stretch facing
// the other side's (padded with filler rows), so the panes can scroll together line for line.

/** Above this many line pairs the table would be too big: every differing line is marked by position instead. */
const MAX_CELLS = 1_000_000;

/**
 * `{before, after, first}`: each side's rows as `{text, changed, filler}` (a filler row stands
 * for a line only the other side has), as many on both sides; `first`: the row of the first
 * change, or -1 when the texts are the same.
 */
export function lineDiff(beforeText, afterText) {
  const a = beforeText === '' ? [] : beforeText.split('\n');
  const b = afterText === '' ? [] : afterText.split('\n');
  const before = [];
  const after = [];
  /** The changed lines a[i..iEnd) and b[j..jEnd), facing each other. */
  const changed = (i, iEnd, j, jEnd) => {
    for (let k = 0; k < Math.max(iEnd - i, jEnd - j); k++) {
      before.push(i + k < iEnd ? { text: a[i + k], changed: true, filler: false } : FILLER);
      after.push(j + k < jEnd ? { text: b[j + k], changed: true, filler: false } : FILLER);
    }
  };
  const same = (text) => {
    before.push({ text, changed: false, filler: false });
    after.push({ text, changed: false, filler: false });
  };
  if (a.length * b.length > MAX_CELLS) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (a[i] === b[i]) same(a[i]);
      else changed(i, i + 1, i, i + 1);
    }
    changed(n, a.length, n, b.length);
  } else {
    // lcs[i][j]: the common lines of a[i..] and b[j..].
    const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
    for (let i = a.length - 1; i >= 0; i--) {
      for (let j = b.length - 1; j >= 0; j--) {
        lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      // The stretch up to the next common line (or the ends) is what changed.
      let i2 = i;
      let j2 = j;
      while (i2 < a.length && j2 < b.length && a[i2] !== b[j2]) {
        if (lcs[i2 + 1][j2] >= lcs[i2][j2 + 1]) i2++;
        else j2++;
      }
      if (i2 === a.length || j2 === b.length) {
        i2 = a.length;
        j2 = b.length;
      }
      changed(i, i2, j, j2);
      if (i2 < a.length) same(a[i2]);
      i = i2 + 1;
      j = j2 + 1;
    }
  }
  return { before, after, first: before.findIndex((r, k) => r.changed || after[k].changed) };
}

const FILLER = Object.freeze({ text: '', changed: false, filler: true });
