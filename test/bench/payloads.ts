// The ~1 KB checkout_completed body every bench run sends, with its own event id each time.
export const checkout = (id: string) => ({
  event: { name: 'checkout_completed', id, value: 149.9, currency: 'EUR', properties: { channel: 'web' } },
  context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/checkout/done', user_agent: 'Mozilla/5.0', overide_ip: '2001:db8::1' },
  products: [
    { id: 'SKU-1', name: 'Trail shoe', category: 'Shoes', price_base: 120, price: 99.9, tax_percent: 19, quantity: 1, brand: 'Acme' },
    { id: 'SKU-2', name: 'Socks', category: 'Accessories', price_base: 12.5, price: 10, tax_percent: 19, quantity: 2, stock_status: 'in stock' },
  ],
  shipping: [{ name: 'Courier', value: 15, tax_percent: 19 }],
  payments: [{ name: 'Card', value: 149.9, type: 'card' }],
  user: { id: 'U-1', email: 'jane.doe@example.com', phone: '+40 722 123 456', first_name: 'Jane', last_name: 'Doe', country: 'RO', city: 'Cluj' },
  consent: { analytics: true, personalization: true, marketing: true },
  cookies: [{ name: '_ga', value: 'GA1.1.123456789.1700000000' }, { name: '_fbp', value: 'fb.1.1700000000000.123' }],
});
