#!/usr/bin/env node
// `tracklane` executable: registers tsx so the TypeScript sources run as they are,
// then hands over to the CLI entry.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
