// How `import … from 'tracklane/sdk'` resolves for a plugin or custom endpoint folder outside
// this package (PLUGINS_DIR / CUSTOMERS_DIR elsewhere on disk, `tracklane test FOLDER`), where
// Node's own self-reference (package.json `exports`, for files inside the package; in a build,
// the build's own package.json: src/build.mjs) cannot reach:
// - `tracklane/sdk` and `tracklane/sdk/testing` are this package's entries: the compiled ones
//   of the build the running code is (the modules the server itself runs), else the
//   TypeScript sources;
// - any other bare import a file outside the package cannot resolve from its own folder
//   (its own node_modules first) is resolved from this package (chai in a folder's tests,
//   say), as NODE_PATH would for require alone.
// Two forms of the same mapping: a require hook (requireResolution: files loaded through
// tsx's require hook, which is how src/load-module.ts loads outside folders in every thread)
// and ESM loader hooks (./resolve-hooks.mjs, registered by `tracklane test`). Plain CommonJS,
// so the .cjs entries and the build can load it before any loader is registered.
'use strict';
const Module = require('node:module');
const { join, sep } = require('node:path');

/** The package's entries, by specifier, as absolute paths: the compiled ones of the build in the folder `build`, or (null) the sources. */
function sdkTargets(root, build) {
  return build
    ? { 'tracklane/sdk': join(build, 'src/sdk/index.js'), 'tracklane/sdk/testing': join(build, 'src/sdk/testing.js') }
    : { 'tracklane/sdk': join(root, 'src/sdk/index.ts'), 'tracklane/sdk/testing': join(root, 'src/sdk/testing.ts') };
}

/** A package name (not a relative, absolute, URL or node: specifier). */
const isBare = (specifier) => !/^(\.{1,2}(\/|$)|\/|[a-zA-Z][a-zA-Z0-9+.-]*:)/.test(specifier);

const installed = new Set();

/**
 * From now on in this thread, require() (and tsx's require hook, which goes through it)
 * resolves the SDK's specifiers to `targets`, and a bare specifier that does not resolve
 * from a file outside `root` from `root` instead. Once per thread and root.
 */
function requireResolution(root, targets) {
  if (installed.has(root)) return;
  installed.add(root);
  const inside = (file) => typeof file === 'string' && (file === root || file.startsWith(root.endsWith(sep) ? root : root + sep));
  const fromRoot = new Module(join(root, 'package.json'));
  fromRoot.filename = join(root, 'package.json');
  fromRoot.paths = Module._nodeModulePaths(root);
  const previous = Module._resolveFilename;
  Module._resolveFilename = function resolveFilename(request, parent, isMain, options) {
    const bare = typeof request === 'string' ? request.split('?')[0] : request;
    if (Object.hasOwn(targets, bare)) return targets[bare];
    try {
      return previous.call(this, request, parent, isMain, options);
    } catch (err) {
      if (err && err.code === 'MODULE_NOT_FOUND' && isBare(bare) && parent && !inside(parent.filename)) {
        return previous.call(this, request, fromRoot, isMain, options);
      }
      throw err;
    }
  };
}

module.exports = { sdkTargets, requireResolution, isBare };
