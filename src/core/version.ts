/** The akas release (package.json version); one place for the CLI, the node and its documents. */
export const VERSION = '0.1.0';
