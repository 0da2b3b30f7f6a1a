// Helpers for commander options that more than one command declares.

/** A repeatable option's parser: each occurrence adds its value (`--witness A --witness B`). */
export const collect = (value: string, previous: string[]) => [...previous, value];
