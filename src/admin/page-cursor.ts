// The cursor of every admin list: the position (a positive integer key the list is ordered by)
// that the next page starts before. Anything that is not one is refused, never read as an
// empty page.
import { AppError } from '../errors.ts';
import type { AppContext } from '../http/types.ts';
import { param } from './admin-params.ts';

const POSITION = /^[1-9][0-9]{0,15}$/;

/** The `next_cursor` of a page whose last item sits at `position`. */
export const encodeCursor = (position: number): string => String(position);

/**
 * The `cursor` query parameter as a position, undefined for the first page.
 * @example pageCursor(ctx) // ?cursor=1042 → 1042; ?cursor=garbage → 400 INVALID_VALUE
 */
export function pageCursor(ctx: AppContext): number | undefined {
  const text = param(ctx, 'cursor');
  if (text === undefined) return undefined;
  const position = Number(text);
  if (!POSITION.test(text) || !Number.isSafeInteger(position)) {
    throw new AppError('INVALID_VALUE', 400, 'cursor must be the next_cursor of a previous page', { field: 'cursor' });
  }
  return position;
}
