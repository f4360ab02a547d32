// Types of resolve-sdk.cjs (plain CommonJS so the entries and the build can use it before tsx is registered).
export declare function sdkTargets(root: string, build: string | null): Record<'tracklane/sdk' | 'tracklane/sdk/testing', string>;
export declare function requireResolution(root: string, targets: Readonly<Record<string, string>>): void;
export declare function isBare(specifier: string): boolean;
