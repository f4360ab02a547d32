// A store that answers but cannot take intake's commits now (another session holds a lock
// intake needs): /readyz reports its message as the reason instead of "store unreachable".
export class StoreBusyError extends Error {
  override name = 'StoreBusyError';
}
