// Valid payloads from the payload examples, as plain data: the minimal form of each of the
// nine events, a full checkout_completed and a full cart_viewed. Also the bases the case
// tables edit. They assume the nine spec event names are approved; host and tax rate may be anything.

const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

export const MINIMAL_CHECKOUT_COMPLETED = {
  event: { name: 'checkout_completed', id: 'ORD-1001', value: 120.5, currency: 'EUR' },
  context: { environment: 'prod', data_source: 'website' },
};

export const MINIMAL_ORDER_CANCELED = {
  event: { name: 'order_canceled', id: 'ORD-1001' },
  context: { environment: 'prod' },
};

export const MINIMAL_LEAD_CREATED = {
  event: { name: 'lead_created', id: 'LEAD-77' },
  context: { environment: 'prod', data_source: 'crm' },
};

export const MINIMAL_LEAD_QUALIFIED = {
  event: { name: 'lead_qualified', id: 'LEAD-77' },
  context: { environment: 'prod', data_source: 'crm' },
};

export const MINIMAL_LEAD_CLOSED = {
  event: { name: 'lead_closed', id: 'LEAD-77' },
  context: { environment: 'dev', data_source: 'phone' },
};

/** The documented minimal cart_viewed: event (name, value, currency) and products with the required fields. */
export const MINIMAL_CART_VIEWED = {
  event: { name: 'cart_viewed', value: 49.99, currency: 'EUR' },
  products: [{ id: 'MUG-1', name: 'Mug', price_base: 59.99, price: 49.99 }],
};

const minimalProductEvent = (name: string) => ({
  event: { name, value: 49.99, currency: 'EUR' },
  context: { environment: 'prod', data_source: 'website' },
  products: [{ id: 'MUG-1', name: 'Mug', price_base: 59.99, price: 49.99, category: 'Kitchen' }],
});
export const MINIMAL_PRODUCT_VIEWED = minimalProductEvent('product_viewed');
export const MINIMAL_PRODUCT_ADDED_TO_CART = minimalProductEvent('product_added_to_cart');
export const MINIMAL_PRODUCT_REMOVED_FROM_CART = minimalProductEvent('product_removed_from_cart');

/** checkout_completed with every object and nearly every field the payload reference defines. */
export const FULL_CHECKOUT_COMPLETED = {
  event: {
    name: 'checkout_completed',
    id: 'ORD-2024-000123',
    value: 318.47,
    currency: 'RON',
    exchange_rate: 1,
    properties: { order_status: 'processing', payment_status: 'paid', store: 'ro-main', is_first_order: true },
  },
  context: {
    environment: 'prod',
    data_source: 'website',
    user_agent: UA,
    overide_ip: '2a02:2f0e:d10:9a00::1',
    url: 'https://shop.example.com/checkout/order-received/123',
    landing_url: 'https://shop.example.com/?utm_source=newsletter&utm_medium=email',
    referrer_url: 'https://www.google.com/',
    page_type: 'checkout',
  },
  products: [
    {
      id: 'TS-1001-BL-M',
      parent_id: 'TS-1001',
      name: 'Cotton T-shirt, blue, M',
      parent_name: 'Cotton T-shirt',
      price_base: 99.99,
      price: 79.99,
      tax_included: true,
      tax_percent: 19,
      quantity: 2,
      category: 'Clothing',
      sku: 'SKU-TS-1001-BL-M',
      parent_sku: 'SKU-TS-1001',
      gtin: '05901234123457',
      mpn: 'TS1001BLM',
      ean: '5901234123457',
      brand: 'Acme',
      type: 'variable',
      stock_status: true,
      stock_location: 'Warehouse Bucharest',
      created_at: 1693526400000,
      url: 'https://shop.example.com/p/cotton-tshirt?color=blue&size=m',
      parent_url: 'https://shop.example.com/p/cotton-tshirt',
      image: 'https://cdn.example.com/img/ts-1001-bl.jpg',
      images: ['https://cdn.example.com/img/ts-1001-bl-2.jpg', 'https://cdn.example.com/img/ts-1001-bl-3.jpg'],
      categories: [{ name: 'Clothing', id: 'cat-1' }, { name: 'T-shirts', id: 'cat-12' }, { name: 'Summer' }],
      coupons: [
        { name: 'SUMMER20', value: 20, tax_included: true, tax_percent: 19, id: 'cp-20', type: 'SEASONAL' },
        { name: 'LOYAL5', value: 5, type: 'LOYALTY', currency: 'RON', exchange_rate: 1 },
        { name: 'BUNDLE', value: 0, tax_precent: '19', type: 'BUNDLE' },
      ],
      properties: { color: 'blue', size: 'M', material: 'cotton', dimensions: ['70cm', '50cm'] },
    },
    {
      id: 'EL-77',
      name: 'Wireless earbuds',
      price_base: 30.5,
      price: 30.5,
      tax_included: true,
      tax_percent: 19,
      quantity: 1,
      category: 'Electronics',
      brand: 'Sonic',
      type: 'simple',
      stock_status: 3,
      currency: 'EUR',
      exchange_rate: 4.97,
      properties: { connectivity: 'Bluetooth 5.3', storage: 'case' },
    },
  ],
  shipping: [
    { name: 'Courier', value: 19.99, tax_included: true, tax_percent: 19, id: 3, type: 'standard', currency: 'RON', exchange_rate: 1 },
  ],
  payments: [
    { name: 'Card', value: 250, id: 'pay-1', type: 'card', currency: 'RON', exchange_rate: 1 },
    { name: 'Gift card', value: 68.47, id: 'pay-2', type: 'gift_card', currency: 'RON', exchange_rate: 1 },
  ],
  coupons: [
    { name: 'WELCOME10', value: 10, tax_included: true, tax_precent: '19', id: 'c-1', type: 'FIRST_ORDER', currency: 'RON', exchange_rate: 1 },
  ],
  user: {
    id: 'cust-42',
    email: 'ana.popescu@example.com',
    phone: '+40 721 234 567',
    first_name: 'Ana',
    last_name: 'Popescu',
    country: 'RO',
    region: 'Bucuresti',
    city: 'Bucuresti',
    street: 'Str. Exemplu 1',
    postal_code: '010101',
    orders_total_number: 5,
    orders_canceled_number: 1,
    orders_total_value: 1520.5,
    orders_refunded_value: 99.99,
    predicted_value: 2400,
    created_at: 1672531200000,
    properties: { loyalty_tier: 'gold', newsletter: true },
  },
  consent: { analytics: true, personalization: false, marketing: true },
  cookies: [
    { name: '_ga', value: 'GA1.1.1234567890.1700000000' },
    { name: '_ga_ABCDEF1234', value: 'GS1.1.1700000000.1.1.1700000100.0.0.0' },
    { name: '_fbp', value: 'fb.1.1700000000000.1234567890' },
    { name: '_fbc', value: 'fb.1.1700000000000.IwAR0abc' },
    { name: '_gcl_aw', value: 'GCL.1700000000.Cj0KCQjw' },
    { name: '_ttp', value: '2XcVbN7mQ1' },
  ],
};

/** cart_viewed per its own reference: plaintext contacts, free-form type, tax 0–50, value = Σ price × quantity. */
export const FULL_CART_VIEWED = {
  event: { name: 'cart_viewed', id: 'cart-7f3a', value: 229.97, currency: 'EUR', exchange_rate: 1, properties: { cart_id: '7f3a' } },
  context: {
    environment: 'prod',
    data_source: 'website',
    user_agent: UA,
    overide_ip: '203.0.113.7',
    url: 'https://shop.example.com/cart',
    landing_url: 'https://shop.example.com/',
    referrer_url: 'https://www.facebook.com/',
    page_type: 'cart',
  },
  products: [
    {
      id: 'MUG-1-W',
      parent_id: 'MUG-1',
      name: 'Mug, white',
      parent_name: 'Mug',
      price_base: 59.99,
      price: 49.99,
      tax_included: true,
      tax_percent: 9,
      quantity: 2,
      category: 'Kitchen',
      sku: 'SKU-MUG-1-W',
      brand: 'Acme',
      type: 'configurable',
      stock_status: 'in stock',
      url: 'https://shop.example.com/p/mug?color=white',
      image: 'https://cdn.example.com/img/mug-w.jpg',
      categories: [{ name: 'Kitchen', id: 'k-1' }],
      coupons: [{ name: 'MUG10', value: 10, tax_included: true, tax_percent: 9 }],
      properties: { color: 'white' },
    },
    { id: 'LAMP-9', name: 'Desk lamp', price_base: 129.99, price: 129.99, tax_percent: 19, quantity: 1, category: 'Lighting', stock_status: 1 },
  ],
  user: {
    id: 'cust-7',
    email: 'ion.ionescu@example.com',
    phone: '(0721) 234.567',
    first_name: 'Ion',
    last_name: 'Ionescu',
    city: 'Cluj-Napoca',
    country: 'Romania',
  },
  consent: { analytics: true, personalization: true, marketing: false },
  cookies: [{ name: '_ga', value: 'GA1.1.987.654' }, { name: '_fbp', value: 'fb.1.1700000000000.42' }],
};

export interface ValidPayload { name: string; body: Record<string, unknown> }

/** Every valid form above, named. */
export const VALID_PAYLOADS: ValidPayload[] = [
  { name: 'minimal checkout_completed', body: MINIMAL_CHECKOUT_COMPLETED },
  { name: 'minimal order_canceled', body: MINIMAL_ORDER_CANCELED },
  { name: 'minimal lead_created', body: MINIMAL_LEAD_CREATED },
  { name: 'minimal lead_qualified', body: MINIMAL_LEAD_QUALIFIED },
  { name: 'minimal lead_closed', body: MINIMAL_LEAD_CLOSED },
  { name: 'minimal cart_viewed', body: MINIMAL_CART_VIEWED },
  { name: 'minimal product_viewed', body: MINIMAL_PRODUCT_VIEWED },
  { name: 'minimal product_added_to_cart', body: MINIMAL_PRODUCT_ADDED_TO_CART },
  { name: 'minimal product_removed_from_cart', body: MINIMAL_PRODUCT_REMOVED_FROM_CART },
  { name: 'full checkout_completed', body: FULL_CHECKOUT_COMPLETED },
  { name: 'full cart_viewed', body: FULL_CART_VIEWED },
];

