// The baseline: bare Koa + koa-bodyparser answering the same acknowledgement, with no
// auth, validation or storage. Ratios against it show what tracklane's work costs.
// BARE_KOA_CHECK_MS: the HTTP server's connectionsCheckingInterval (the idle bench's floor
// checks every second, as tracklane's server does); Node's default otherwise.
import { createServer } from 'node:http';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';

const app = new Koa();
app.use(bodyParser({ enableTypes: ['json'] }));
app.use((ctx) => {
  ctx.body = { emitter: 'tracklane', detail: 'Event received', level: 0, version: 1 };
});
const checkMs = process.env.BARE_KOA_CHECK_MS;
const server = createServer(checkMs ? { connectionsCheckingInterval: Number(checkMs) } : {}, app.callback());
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : ''}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
