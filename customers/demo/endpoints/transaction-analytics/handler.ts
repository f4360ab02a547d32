// transaction-analytics: every transaction becomes a `transaction` record keyed by its id
// (a re-sent batch replaces, never doubles); each approved sale with an order id becomes a
// `payment_confirmed` event keyed by the transaction id. It never emits checkout_completed:
// the shop's own checkout_completed (with the buyer and consent) is the conversion, and a
// poorer copy from the processor must not win the dedup race against it. Messages
// summarise the batch per currency.
import { type CustomHandler, type CustomRecord, type StandardEventPayload, customValidationError } from 'tracklane/sdk';

export interface Transaction {
  transaction_id: string;
  order_id?: string;
  kind: 'sale' | 'refund' | 'chargeback';
  status: 'approved' | 'declined' | 'pending';
  amount: number;
  fee?: number;
  currency: string;
  method: 'card' | 'paypal' | 'bank_transfer' | 'wallet';
  card_brand?: string;
  country?: string;
  processed_at: string;
}

export interface TransactionAnalyticsBody {
  merchant_id: string;
  report_id?: string;
  transactions: Transaction[];
}

/** Cents arithmetic: sums of decimal amounts stay exact. */
const cents = (n: number): number => Math.round(n * 100);
const money = (c: number): string => (c / 100).toFixed(2);

const handler: CustomHandler<TransactionAnalyticsBody> = (body, ctx) => {
  const seen = new Map<string, number>();
  body.transactions.forEach((t, i) => {
    const first = seen.get(t.transaction_id);
    if (first !== undefined) {
      throw customValidationError(`transactions[${i}].transaction_id`, 'a transaction id not used earlier in the same batch',
        `transactions[${i}].transaction_id repeats transactions[${first}].transaction_id (${t.transaction_id})`);
    }
    seen.set(t.transaction_id, i);
    if (t.fee !== undefined && t.fee > t.amount) {
      throw customValidationError(`transactions[${i}].fee`, `a number from 0 to the amount (${t.amount})`, `transactions[${i}].fee is larger than its amount`);
    }
  });

  const records: CustomRecord[] = [];
  const events: StandardEventPayload[] = [];
  const totals = new Map<string, { sales: number; refunds: number; fees: number }>();
  const counts = { approved: 0, declined: 0, pending: 0 };
  for (const t of body.transactions) {
    counts[t.status] += 1;
    const fee = t.fee ?? 0;
    records.push({
      type: 'transaction',
      key: t.transaction_id,
      data: {
        merchant_id: body.merchant_id,
        ...(body.report_id !== undefined && { report_id: body.report_id }),
        ...(t.order_id !== undefined && { order_id: t.order_id }),
        kind: t.kind,
        status: t.status,
        amount: t.amount,
        fee,
        net: money(cents(t.amount) - cents(fee)),
        currency: t.currency,
        method: t.method,
        ...(t.card_brand !== undefined && { card_brand: t.card_brand }),
        ...(t.country !== undefined && { country: t.country }),
        processed_at: t.processed_at,
      },
    });
    if (t.status !== 'approved') continue;
    const sum = totals.get(t.currency) ?? { sales: 0, refunds: 0, fees: 0 };
    if (t.kind === 'sale') sum.sales += cents(t.amount);
    else sum.refunds += cents(t.amount);
    sum.fees += cents(fee);
    totals.set(t.currency, sum);
    if (ctx.settings.emit_payments === true && t.kind === 'sale' && t.order_id !== undefined) {
      events.push({
        event: { name: 'payment_confirmed', id: t.transaction_id, value: t.amount, currency: t.currency, properties: { order_id: t.order_id } },
        context: { environment: 'prod', data_source: 'admin' },
        payments: [{ type: t.method, value: t.amount }],
      });
    }
  }

  const n = body.transactions.length;
  const messages = [
    `${n} transaction${n === 1 ? '' : 's'}: ${counts.approved} approved, ${counts.declined} declined, ${counts.pending} pending`,
    ...[...totals.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([cur, s]) =>
      `${cur}: sales ${money(s.sales)}, refunds and chargebacks ${money(s.refunds)}, fees ${money(s.fees)}, net ${money(s.sales - s.refunds - s.fees)}`),
  ];
  if (events.length > 0) messages.push(`${events.length} approved sale${events.length === 1 ? '' : 's'} sent as payment_confirmed`);
  return { events, records, messages, recordsProcessed: n };
};

export default handler;
