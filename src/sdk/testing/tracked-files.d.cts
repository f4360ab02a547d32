// Types of tracked-files.cjs (plain CommonJS so .mocharc.cjs can use it).
export declare function trackedFiles(root: string, folders: readonly string[]): string[] | null;
