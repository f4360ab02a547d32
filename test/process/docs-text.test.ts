// What the docs tell a reader to paste or rely on, held to the project: every curl example's
// URL is quoted (zsh, macOS's shell, stops at an unquoted `?` with "no matches found"), and
// the rules guide names the command that goes back from a store version to the file.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/spawn-server.ts';
import { trackedFiles } from '../../src/sdk/testing/tracked-files.cjs';
import { USAGE } from '../../src/cli/usage.ts';
import { commandName, usageCommands } from './readme-text.ts';

/** The shell lines of the fenced code blocks in `markdown`, continuation lines joined. */
function shellLines(markdown: string): string[] {
  const lines: string[] = [];
  for (const [, lang, body] of markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    if (['sh', 'bash', 'shell', 'zsh', ''].includes(lang)) lines.push(...body.replace(/\\\n/g, ' ').split('\n'));
  }
  return lines;
}

/** A shell line's words, each with whether it starts quoted (a quote closes where the shell would). */
function words(line: string): { text: string; quoted: boolean }[] {
  const out: { text: string; quoted: boolean }[] = [];
  let current: { text: string; quoted: boolean } | null = null;
  let quote: string | null = null;
  for (const ch of line) {
    if (quote === null && /\s/.test(ch)) {
      if (current) out.push(current);
      current = null;
      continue;
    }
    current ??= { text: '', quoted: ch === '"' || ch === "'" };
    if (quote === null && (ch === '"' || ch === "'")) quote = ch;
    else if (ch === quote) quote = null;
    current.text += ch;
  }
  if (current) out.push(current);
  return out;
}

const URL_START = /^["']?(https?:\/\/|localhost[:/]|127\.0\.0\.1[:/]|\$\{?[A-Z_]*URL\}?\/)/;

/** The docs a reader pastes from: every tracked Markdown file, and the README the scaffold writes. */
function docs(): { file: string; text: string }[] {
  const files = (trackedFiles(ROOT, ['.']) ?? []).filter((f) => f.endsWith('.md'));
  const scaffold = readFileSync(join(ROOT, 'src/customers/scaffold.ts'), 'utf8').replace(/\\`/g, '`').replace(/\\\\/g, '\\');
  return [...files.map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') })), { file: 'src/customers/scaffold.ts', text: scaffold }];
}

describe('docs: what a reader pastes or relies on', () => {
  it('every curl example quotes its URL', () => {
    const unquoted: string[] = [];
    let curls = 0;
    for (const { file, text } of docs()) {
      for (const line of shellLines(text)) {
        // curl as a command (a line's first word, after sudo, or after ; && | or $( ), not a package name.
        if (!/(^\s*|[;&|(]\s*)(sudo\s+)?curl\s/.test(line)) continue;
        curls++;
        const urls = words(line).filter((w) => URL_START.test(w.text));
        if (urls.length === 0 || urls.some((w) => !w.quoted)) unquoted.push(`${file}: ${line.trim()}`);
      }
    }
    expect(curls, 'the docs have curl examples').to.be.greaterThan(5);
    expect(unquoted, 'curl lines whose URL is not quoted').to.deep.equal([]);
  });

  it('the rules guide goes back from a store version to the file with rules revert, a command the CLI has', () => {
    const guide = readFileSync(join(ROOT, 'src/rules/README.md'), 'utf8');
    const back = guide.replace(/\s+/g, ' ').split(/(?<=\.) /).find((s) => s.includes('go back to what a file says'));
    expect(back, 'the guide says how to go back to what a file says').to.be.a('string');
    expect(back).to.include('`rules revert DESTINATION');
    const commands = usageCommands(USAGE);
    const named = [...guide.matchAll(/`(rules [a-z]+)[^`]*`/g)].map((m) => commandName(m[1]));
    expect(named).to.include('rules revert');
    expect(named.filter((c) => !commands.has(c)), 'rules commands the guide names that the CLI lacks').to.deep.equal([]);
  });
});
