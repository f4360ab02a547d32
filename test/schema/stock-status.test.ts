// parseStockStatus: the documented boolean/number/word forms, to one boolean.
import { expect } from 'chai';
import { parseStockStatus } from '../../src/schema/stock-status.ts';

describe('parseStockStatus', () => {
  const table: [unknown, boolean][] = [
    [undefined, true], [null, true], [true, true], [false, false],
    [1, true], [0.01, true], [0, false], [-3, false],
    ['0', false], ['no', false], ['nu', false], ['false', false], ['out of stock', false], ['sold out', false],
    ['unavailable', false], ['indisponibil', false], ['fara stoc', false], ['stoc epuizat', false],
    ['  SOLD OUT ', false], ['Out of Stock', false], ['FĂRĂ STOC', false], ['stoc   epuizat', false],
    ['in stock', true], ['yes', true], ['1', true], ['-1', true], ['', true], ['limited', true], [{}, true],
  ];
  for (const [input, expected] of table) {
    it(`${JSON.stringify(input) ?? 'undefined'} → ${expected}`, () => {
      expect(parseStockStatus(input)).to.equal(expected);
    });
  }
});
