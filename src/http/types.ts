// What middlewares put on ctx.state, typed once.
import type { Context } from 'koa';
import type { Logger } from '../logger.ts';
import type { Account } from '../accounts/types.ts';

/** Which body shape errors take: the payload reference gives each endpoint family its own. */
export type ResponseFamily = 'ack' | 'standard' | 'custom' | 'plain';

export interface AppState {
  requestId: string;
  log: Logger;
  family: ResponseFamily;
  /** Route label for metrics. */
  route: string;
  account?: Account;
  /** The admin token's name once the admin gate passed: the author of what the request changes. */
  admin?: { name: string };
  /** The parsed, safety-checked JSON body. */
  body?: Record<string, unknown>;
  /** The text `body` was parsed from, as received (decoded and inflated). */
  rawBody?: string;
}

export type AppContext = Context & { state: AppState };
