// ESM loader hooks (module.register) with the mapping of ./resolve-sdk.cjs: `tracklane/sdk`
// and `tracklane/sdk/testing` to this package's entries, and a bare import that a file outside
// the package cannot resolve from its own folder resolved from the package. Registered by
// `tracklane test FOLDER` (src/cli/test-folder.ts) beside tsx's hooks.
import { pathToFileURL } from 'node:url';

let targets = {};
let rootUrl = '';
let fromRoot = '';

/** `data`: { root, targets } as resolve-sdk.cjs's sdkTargets gives them. */
export function initialize(data) {
  rootUrl = pathToFileURL(data.root).href.replace(/\/?$/, '/');
  fromRoot = new URL('package.json', rootUrl).href;
  targets = Object.fromEntries(Object.entries(data.targets).map(([k, v]) => [k, pathToFileURL(v).href]));
}

const isBare = (specifier) => !/^(\.{1,2}(\/|$)|\/|[a-zA-Z][a-zA-Z0-9+.-]*:)/.test(specifier);

export async function resolve(specifier, context, next) {
  if (Object.hasOwn(targets, specifier)) return next(targets[specifier], context);
  try {
    return await next(specifier, context);
  } catch (err) {
    const outside = context.parentURL !== undefined && !context.parentURL.startsWith(rootUrl);
    if (err?.code === 'ERR_MODULE_NOT_FOUND' && isBare(specifier) && outside) return next(specifier, { ...context, parentURL: fromRoot });
    throw err;
  }
}
