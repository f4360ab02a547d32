// The scaffolds' templates (src/scaffold-template.ts): filled as written, a value missing is an
// error, and every template the scaffolds use is a file of its own under a templates/ folder.
import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fillTemplate } from '../src/scaffold-template.ts';
import { ROOT } from './helpers/spawn-server.ts';

describe('scaffold templates', () => {
  it('fill every {{name}} with its value, the same name as often as it stands, and leave other text as written', () => {
    const text = "import type { X } from 'tracklane/sdk';\nconst a = `${b}`; // {{type}} and {{type}}, {{Type}}Settings\n";
    expect(fillTemplate(text, { type: 'acme-ads', Type: 'AcmeAds' }, 'x')).to.equal("import type { X } from 'tracklane/sdk';\nconst a = `${b}`; // acme-ads and acme-ads, AcmeAdsSettings\n");
  });

  it('refuse a {{name}} with no value, naming the template', () => {
    expect(() => fillTemplate('{{type}} {{colour}}', { type: 'a' }, 'index.ts.tmpl')).to.throw('index.ts.tmpl: no value for {{colour}}');
  });

  it('are .tmpl files beside the two scaffolds, which tsc, mocha and the build pass over', () => {
    for (const folder of ['src/customers/templates', 'src/destinations/templates']) {
      const names = readdirSync(join(ROOT, folder));
      expect(names, folder).not.to.be.empty;
      expect(names.filter((n) => !n.endsWith('.tmpl')), folder).to.deep.equal([]);
    }
  });
});
