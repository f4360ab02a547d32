// Entry of the delivery thread when the server runs from the build in dist/ (started by
// delivery-thread-host.ts): the compiled ES module loads natively. Among the sources,
// in-delivery-thread.cjs does this through tsx.
import { runInDeliveryThread } from './in-delivery-thread.ts';

runInDeliveryThread();
