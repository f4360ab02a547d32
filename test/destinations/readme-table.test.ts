// The README's destination table is the plugins' own data: each row names a shipped plugin,
// in the loader's order, its type and category (consent gate) as the definition declares
// them; only "sends to" is written by hand. The table need not name every plugin (a new
// destination is one folder and touches nothing else; `tracklane plugins list` lists them all),
// but a row can never outlive its plugin or say another category than the plugin's.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DestinationPlugin } from '../../src/destinations/types.ts';
import { shippedPluginNames, shippedPlugins } from '../helpers/shipped-plugins.ts';

const README = fileURLToPath(new URL('../../README.md', import.meta.url));
const HEADER = '| type | category (consent gate) | sends to |';

/** The category column as the definition makes it: its category and the consent flag that gates it. */
function categoryCell(plugin: Pick<DestinationPlugin, 'category' | 'consent'>): string {
  return plugin.consent === null
    ? `${plugin.category} (none unless \`consent_category\` is set)`
    : `${plugin.category} (\`consent.${plugin.consent}\`)`;
}

/** The rows of the table under HEADER, as cells; [] when there is no such table. */
function tableRows(markdown: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(HEADER);
  if (start < 0) return [];
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.slice(1, line.endsWith('|') ? -1 : undefined).split(/(?<!\\)\|/).map((c) => c.trim()));
  }
  return rows;
}

describe('README destination table', () => {
  it('says each consent gate the way the definition declares it', () => {
    expect(categoryCell({ category: 'advertising', consent: 'marketing' })).to.equal('advertising (`consent.marketing`)');
    expect(categoryCell({ category: 'webhook', consent: null })).to.equal('webhook (none unless `consent_category` is set)');
  });

  it('names shipped plugins only, in the loader\'s order, each with the type and category its plugin declares', async () => {
    const rows = tableRows(readFileSync(README, 'utf8'));
    expect(rows, `README.md has a table headed ${HEADER}`).to.not.be.empty;
    const registry = await shippedPlugins();
    const listed = rows.map(([type]) => type.replace(/^`|`$/g, ''));
    expect(listed.filter((name) => !registry.has(name)), 'rows of no shipped plugin').to.deep.equal([]);
    const expected = shippedPluginNames().filter((name) => listed.includes(name)).map((name) => [`\`${name}\``, categoryCell(registry.get(name)!.plugin)]);
    expect(rows.map(([type, category]) => [type, category]), 'README rows: type, category (consent gate)').to.deep.equal(expected);
    for (const [type, , sendsTo] of rows) expect(sendsTo, `${type}: what it sends to`).to.be.a('string').and.not.equal('');
  });
});
