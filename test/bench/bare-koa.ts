// The baseline: bare Koa + koa-bodyparser answering the same acknowledgement, with no
// auth, validation or storage. Ratios against it show what tracklane's work costs.
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';

const app = new Koa();
app.use(bodyParser({ enableTypes: ['json'] }));
app.use((ctx) => {
  ctx.body = { emitter: 'tracklane', detail: 'Event received', level: 0, version: 1 };
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : ''}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
