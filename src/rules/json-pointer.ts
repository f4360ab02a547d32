// JSON Pointers (RFC 6901) for error locations: `/rules/2/output/params.value`.

/** `base` extended by one reference token, escaped (`~` → `~0`, `/` → `~1`). */
export function childPointer(base: string, token: string | number): string {
  return `${base}/${String(token).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}
