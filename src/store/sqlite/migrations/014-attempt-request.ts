// Migration 14: what each attempt sent (JSON: method, URL, headers with secrets masked, the
// body up to 16 KiB, its size and SHA-256), so a trace shows it instead of a request rebuilt
// when it is opened. NULL for the attempts made before.
export default `
  ALTER TABLE delivery_attempts ADD COLUMN request TEXT;
`;
