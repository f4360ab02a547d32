// queryId reads `id` from the query string as Koa's ctx.query does, without Koa's parse.
import { expect } from 'chai';
import Koa from 'koa';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { queryId } from '../../src/http/query-id.ts';
import type { AppContext } from '../../src/http/types.ts';

const app = new Koa();
const contextFor = (query: string): AppContext =>
  app.createContext({ url: `/webhooks/service/event?${query}`, headers: {}, socket: {} } as unknown as IncomingMessage, {} as ServerResponse) as unknown as AppContext;

/** The same query string read both ways. */
function agree(query: string): void {
  expect(queryId(contextFor(query)), JSON.stringify(query)).to.deep.equal(contextFor(query).query.id);
}

describe('queryId', () => {
  it('gives what ctx.query.id gives for the usual and the odd query strings', () => {
    for (const q of ['', 'id=AB12CD34', 'id=AB12CD34&validate=platform', 'validate=platform&id=AB12CD34', 'id', 'id=', 'id=a=b', 'idx=1', 'xid=1',
      'id=a&id=b', 'id=a&id=b&id=c', '&&id=a&&', 'id=a&', '&', '=', '==', 'id&id', 'i', 'd=1', 'ID=1', 'id=%41', 'id=a+b', '%69d=a', 'id=é',
      '?id=a', 'id=a;b', 'id=a#b', 'id=a b']) agree(q);
  });

  it('agrees on random query strings made of the characters that matter', () => {
    // A fixed linear congruential sequence: the same strings on every run.
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const pieces = ['id', 'i', 'd', '=', '&', 'a', 'B', '1', '-', '.', '_', '~', '+', '%', '%69', '?', ' '];
    for (let i = 0; i < 3000; i++) {
      let q = '';
      for (let k = next(12); k > 0; k--) q += pieces[next(pieces.length)];
      agree(q);
    }
  });
});
