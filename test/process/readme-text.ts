// Reads the README as a reader does: the Quick start's steps (headings, prose, code blocks and
// the terminal each shell block names) and the CLI table's commands, so tests hold the text
// itself to what the project does.

export interface QuickStartBlock {
  lang: string;
  /** The block's text without its `# terminal N` line. */
  text: string;
  /** From the block's first line, `# terminal 1` or `# terminal 2`; null when it names none. */
  terminal: number | null;
}

export interface QuickStartStep {
  heading: string;
  /** The step's text outside its code blocks. */
  prose: string;
  blocks: QuickStartBlock[];
}

/** The text of the `## title` section, up to the next `## ` heading. */
export function readmeSection(readme: string, title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README has no "## ${title}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start + 1, end < 0 ? undefined : end);
}

/** The text of section `title`'s shell block whose first line starts with `first`, that line left out. */
export function shellBlock(readme: string, title: string, first: string): string {
  for (const m of readmeSection(readme, title).matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    const [head, ...rest] = m[1].split('\n');
    if (head.startsWith(first)) return rest.join('\n');
  }
  throw new Error(`README's ${title} section has no shell block starting "${first}"`);
}

/** The Quick start's `### N. …` steps, in order. */
export function quickStartSteps(readme: string): QuickStartStep[] {
  const section = readmeSection(readme, 'Quick start');
  const parts = section.split(/^### /m).slice(1);
  return parts.map((part) => {
    const heading = part.slice(0, part.indexOf('\n'));
    const blocks: QuickStartBlock[] = [];
    const prose = part.replace(/^```(\w*)\n([\s\S]*?)^```$/gm, (_all, lang: string, body: string) => {
      const m = /^# terminal (\d+)\n/.exec(body);
      blocks.push({ lang, text: m ? body.slice(m[0].length) : body, terminal: m ? Number(m[1]) : null });
      return '';
    });
    return { heading, prose, blocks };
  });
}

/**
 * A command's name as `--help` and the README's table write it: its leading lower-case words
 * (`accounts create --name N` → `accounts create`, `backup FILE` → `backup`).
 */
export function commandName(usage: string): string {
  const words: string[] = [];
  for (const w of usage.trim().split(/\s+/)) {
    if (!/^[a-z][a-z-]*$/.test(w)) break;
    words.push(w);
  }
  return words.join(' ');
}

/** Every command named in the first column of the Operator CLI table. */
export function cliTableCommands(readme: string): Set<string> {
  const names = new Set<string>();
  for (const row of readmeSection(readme, 'Operator CLI').split('\n')) {
    if (!row.startsWith('| `')) continue;
    const first = row.slice(1).split(/(?<!\\)\|/)[0];
    for (const span of first.matchAll(/`([^`]+)`/g)) names.add(commandName(span[1]));
  }
  return names;
}

/** Every command the CLI's usage text lists (src/cli/usage.ts). */
export function usageCommands(usage: string): Set<string> {
  const names = new Set<string>();
  const commands = usage.slice(usage.indexOf('Commands:'));
  for (const line of commands.split('\n')) {
    const m = /^ {2}([a-z][a-z-]*(?: [a-z][a-z-]*)*)/.exec(line);
    if (m) names.add(commandName(m[1]));
  }
  return names;
}
