// Entry of the delivery thread when the server runs from the build in dist/ (delivery-thread.ts):
// the compiled ES module loads natively. Among the sources, delivery-worker.cjs does this through tsx.
import { runDeliveryWorker } from './delivery-worker.ts';

runDeliveryWorker();
