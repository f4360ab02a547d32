// Table-driven `it` blocks the plugin unit tests share: settings a plugin's schema must accept
// or refuse (ajv in strict mode, so a sloppy schema fails here before it reaches the loader),
// and replies whose outcome and Retry-After wait are checked.
import { Ajv } from 'ajv';
import formatsPlugin from 'ajv-formats';
import { expect } from 'chai';
import type { Classification, PlatformResponse } from '../../destinations/types.ts';

/** [title, settings]: the title follows `accepts ` or `refuses ` in the test name. */
export type SettingsCase = [string, unknown];

/** One `it` per case: `accepts …` must validate (errors shown when not), `refuses …` must not. */
export function settingsSchemaCases(schema: Record<string, unknown>, cases: { accepts: SettingsCase[]; refuses: SettingsCase[] }): void {
  const ajv = new Ajv({ allErrors: true, strict: true });
  formatsPlugin.default(ajv);
  const validate = ajv.compile(schema);
  for (const [what, config] of cases.accepts) {
    it(`accepts ${what}`, () => expect(validate(config), JSON.stringify(validate.errors)).to.equal(true));
  }
  for (const [what, config] of cases.refuses) {
    it(`refuses ${what}`, () => expect(validate(config)).to.equal(false));
  }
}

/** [title, reply, outcome, retryAfterMs]: no wait given means the verdict must carry none. */
export type OutcomeCase = [string, PlatformResponse, Classification['outcome'], number?];

/**
 * One `it` per reply: the outcome, the exact wait (or none), and a non-empty message on
 * every outcome but success.
 */
export function outcomeCases(classify: (res: PlatformResponse) => Classification, cases: OutcomeCase[]): void {
  for (const [what, response, outcome, after] of cases) {
    it(`${what} → ${outcome}${after ? ` after ${after} ms` : ''}`, () => {
      const c = classify(response);
      expect(c.outcome).to.equal(outcome);
      expect(c.outcome === 'retryable' ? c.retryAfterMs : undefined).to.equal(after);
      if (c.outcome !== 'success') expect(c.message).to.be.a('string').and.not.equal('');
    });
  }
}
