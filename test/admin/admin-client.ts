// What the admin API tests share: the token, a JSON call with it, and a clean lead event.
export const TOKEN = 'admin-token-for-tests-0123456789';
export const auth = { authorization: `Bearer ${TOKEN}` };

/** A call to the admin API with the token; the answer's status and parsed JSON body. */
export async function adminCall(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  // A change is always application/json (the gate refuses anything else); no body is {}.
  const changes = method !== 'GET' && method !== 'HEAD';
  const r = await fetch(`${base}${path}`, {
    method, headers: { ...auth, ...(changes ? { 'content-type': 'application/json' } : {}) },
    body: changes ? JSON.stringify(body ?? {}) : undefined,
  });
  return { status: r.status, body: await r.json() };
}

/** A lead_created event without warnings. */
export const lead = (id: string) => ({
  event: { name: 'lead_created', id },
  context: { environment: 'prod', data_source: 'crm', url: 'https://shop.example/contact' },
  consent: { analytics: true, personalization: true, marketing: true },
});
