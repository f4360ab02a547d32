// Entry of the event writer thread when the server runs from the build in dist/ (writer-thread.ts):
// the compiled ES module loads natively. Among the sources, writer-worker.cjs does this through tsx.
import { runWriterWorker } from './writer-worker.ts';

runWriterWorker();
