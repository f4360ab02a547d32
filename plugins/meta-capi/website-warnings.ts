// Meta requires `event_source_url` and `client_user_agent` on every `action_source:
// website` event; without them an event is accepted but may not be used for
// optimisation. The URL falls back to the account's host (context.url), so what is left
// to say is which of the two a website event still lacks.
import type { BuildInput } from 'tracklane/sdk';
import { actionSource } from './action-source.ts';
import type { MetaCapiSettings } from './settings.ts';

const hasText = (v: unknown): boolean => typeof v === 'string' && v.trim() !== '';

export function websiteWarnings({ items }: BuildInput<MetaCapiSettings>): string[] {
  const out: string[] = [];
  for (const item of items) {
    const ctx = item.event.context;
    if (actionSource(ctx) !== 'website') continue;
    if (!hasText(ctx.user_agent)) {
      out.push('website event without client_user_agent: send context.user_agent (the browser\'s User-Agent); Meta may not use the event for optimisation without it');
    }
    if (!hasText(ctx.url)) {
      out.push('website event without event_source_url: send context.url, or set the account\'s host so it can stand in');
    }
  }
  return [...new Set(out)];
}
