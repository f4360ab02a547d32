// What the GA4 golden tests share: the account, stream and clock, the cookies, hashes and
// products of the payloads, and the harness running them through the real pipeline.
import type { MapResult } from 'tracklane/sdk';
import { expectOneRequest, goldenHarness, type GoldenHarness } from 'tracklane/sdk/testing';
import ga4 from './index.ts';

export const ACCOUNT = { scriptId: 'GOLD1234', country: 'RO', host: 'https://shop.example.com' };
/** The page URL of an event sent without context.url: the account's host (the payload spec's fallback). */
export const HOST_URL = ACCOUNT.host;
export const SETTINGS = { measurement_id: 'G-ABCDEF1234', api_secret: 'golden-secret' };
export const COLLECT_URL = 'https://www.google-analytics.com/mp/collect?measurement_id=G-ABCDEF1234&api_secret=golden-secret';
export const RECEIVED = 1_795_252_500_000; // 2026-11-21T09:15:00Z
export const MICROS = 1_795_252_500_000_000;
export const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

export const GA = { name: '_ga', value: 'GA1.1.1234567890.1700000000' };
export const GA_SESSION = { name: '_ga_ABCDEF1234', value: 'GS2.1.s1795251000$o3$g1$t1795252400$j60$l0$h0' };
export const CLIENT_ID = '1234567890.1700000000';
export const SESSION_ID = '1795251000';
/** HMAC-SHA256('GOLD1234', 'id:crm-9001') split as derived-client-id.ts documents, computed apart. */
export const DERIVED_CLIENT_ID = '53892509.1631472513';
/** One hour in ms: GA4 backdates an event by at most 72 of them (Measurement Protocol, "Override timestamp"). */
export const HOUR = 3_600_000;

export const H = {
  email_ana: 'ec2fec7969b33848f8274bc619e6e2338dff2672313e7c65fecc357575ad8417', // anapopescu@gmail.com
  phone_ana: 'bc4d7e7d07c12f4ef1c15e16cbdf0c19868e561bff2f2a5a14ba770f97220d67', // +40721234567
  fn_ana: '24d4b96f58da6d4a8512313bbd02a28ebf0ca95dec6e4c86ef78ce7f01e788ac', // ana
  ln_popescu: '912ee1d17d1d3594ebece22ed4bd433d510467e7b7b5723be8d49ed2457c7b2c', // popescu
  street: 'c84db050752289fd740f4d9edc041145eac8826c6012211bdbfc06985a21bd82', // str exemplu 1
  email_ion: 'a9d861474a28a9186fcf58288831b08c9b81174b88c46e518203d75601fe8ec3', // ion.ionescu@example.com
  email_maria: '2bf26a4b222b621aa1d5442ca03dec657ee8b50bbe650ac5fb83ec3926fa9482', // maria.ionescu@example.ro
  phone_maria: '3ea316a4615bbca632bb464e7d68dab5cb567230c79b9fae4d3d17aa16cf87f6', // +40744555666
};

export const MUG = {
  id: 'MUG-1-W', parent_id: 'MUG-1', name: 'Mug, white', parent_name: 'Mug',
  price_base: 59.99, price: 49.99, tax_included: true, tax_percent: 9, quantity: 2, category: 'Kitchen', brand: 'Acme',
};
export const MUG_ITEM = {
  item_id: 'MUG-1-W', item_name: 'Mug', item_variant: 'Mug, white', item_brand: 'Acme', item_category: 'Kitchen',
  price: 49.99, quantity: 2, discount: 10,
};

/** The golden harness for this account and stream, its clock `afterMs` past the event's receipt. */
export function ga4Golden(afterMs = 1000): GoldenHarness {
  return goldenHarness({
    plugin: ga4, destination: { id: 'dst-ga4', name: 'GA4' }, account: ACCOUNT, settings: SETTINGS, receivedAt: RECEIVED, now: RECEIVED + afterMs,
  });
}

export function expectBody(result: MapResult, eventId: string, expected: Record<string, unknown>): void {
  expectOneRequest(result, { url: COLLECT_URL, headers: { 'content-type': 'application/json' }, eventId, body: expected });
}
