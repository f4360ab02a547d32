// Where JSON text goes wrong, as line and column, for the rules editor's syntax errors.

/**
 * Where JSON text first goes wrong, as an offset (null when it parses). JSON.parse's messages
 * name a position only for some errors, so the text is scanned again to find it.
 */
export function jsonErrorOffset(text) {
  let i = 0;
  const NUM = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
  const fail = () => {
    throw i;
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const expect = (c) => (text[i] === c ? i++ : fail());
  const str = () => {
    i++;
    while (i < text.length) {
      const c = text[i];
      if (c === '"') return void i++;
      if (c < ' ') fail();
      if (c === '\\') {
        i++;
        if (text[i] === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) i += 5;
        else if (text[i] !== undefined && '"\\/bfnrt'.includes(text[i])) i++;
        else fail();
      } else i++;
    }
    fail();
  };
  const value = () => {
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) return void i++;
      for (;;) {
        if (c === '{') {
          ws();
          if (text[i] !== '"') fail();
          str();
          ws();
          expect(':');
        }
        value();
        ws();
        if (text[i] === ',') i++;
        else return void expect(close);
      }
    }
    if (c === '"') return str();
    for (const word of ['true', 'false', 'null']) if (text.startsWith(word, i)) return void (i += word.length);
    NUM.lastIndex = i;
    const m = NUM.exec(text);
    if (!m || m[0] === '') fail();
    i += m[0].length;
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return null;
  } catch (at) {
    if (typeof at === 'number') return at;
    throw at;
  }
}

/** Line and column (1-based) of an offset in text. */
export function lineColumn(text, offset) {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1].length + 1 };
}
