// Types of build-state.cjs (plain CommonJS so the entries can use it before tsx is registered).
export declare const BUILD_DIR: string;
export declare const BUILDS_DIR: string;
export declare const STAMP_FILE: string;
export declare function newestSourceChange(dir: string): number;
export declare function buildStarted(root: string): number | null;
export declare function buildFolder(url: string): string | null;
export declare function coreBuild(root: string): { fresh: true } | { fresh: false; why: string };
export declare function sourcesWarning(why: string): string;
export declare function compiledCopy(root: string, file: string, build?: string): string | null;
export declare function runsCompiled(url: string): boolean;
export declare function siblingModule(url: string, name: string): string;
export declare function projectRoot(url: string): string;
