// docs/reading-path.md walks one event from endpoint 1's socket to Meta's request, a step a row,
// each row naming a file:line and the text on that line. A refactor that moves a step's line
// must mend the row, or the walk a new reader follows stops matching the code.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/spawn-server.ts';

interface Step { n: string; file: string; line: number; anchor: string }

function steps(markdown: string): Step[] {
  const out: Step[] = [];
  for (const [, n, file, line, anchor] of markdown.matchAll(/^\| (\d+) \| `([^`:]+):(\d+)` \| `(.*?)` \|/gm)) {
    out.push({ n, file, line: Number(line), anchor });
  }
  return out;
}

describe('docs/reading-path.md', () => {
  const doc = readFileSync(join(ROOT, 'docs/reading-path.md'), 'utf8');

  it('finds the rows it checks (a format change must not make this test pass on nothing)', () => {
    expect(steps(doc).length).to.be.at.least(20);
  });

  it("every step's anchor text stands on the line the row names", () => {
    const moved = steps(doc).filter((s) => {
      const lines = readFileSync(join(ROOT, s.file), 'utf8').split('\n');
      return !(lines[s.line - 1] ?? '').includes(s.anchor);
    });
    expect(moved.map((s) => `step ${s.n} ${s.file}:${s.line} ${s.anchor}`), 'a step moved: find its anchor (grep -n -F) and mend its row in docs/reading-path.md').to.deep.equal([]);
  });
});
