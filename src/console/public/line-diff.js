// Which lines of two texts differ, for the rules diff's side-by-side view: a longest common
// subsequence of lines; what is not in it is marked removed (before) or added (after).

/** Above this many line pairs the table would be too big: every differing line is marked by position instead. */
const MAX_CELLS = 1_000_000;

/** `{before, after}`: each text's lines as `{text, changed}`. */
export function lineDiff(beforeText, afterText) {
  const a = beforeText === '' ? [] : beforeText.split('\n');
  const b = afterText === '' ? [] : afterText.split('\n');
  const keepA = new Array(a.length).fill(false);
  const keepB = new Array(b.length).fill(false);
  if (a.length * b.length > MAX_CELLS) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) keepA[i] = keepB[i] = a[i] === b[i];
  } else {
    // lcs[i][j]: the common lines of a[i..] and b[j..].
    const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
    for (let i = a.length - 1; i >= 0; i--) {
      for (let j = b.length - 1; j >= 0; j--) {
        lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    for (let i = 0, j = 0; i < a.length && j < b.length;) {
      if (a[i] === b[j]) {
        keepA[i++] = true;
        keepB[j++] = true;
      } else if (lcs[i + 1][j] >= lcs[i][j + 1]) i++;
      else j++;
    }
  }
  return {
    before: a.map((text, i) => ({ text, changed: !keepA[i] })),
    after: b.map((text, j) => ({ text, changed: !keepB[j] })),
  };
}
