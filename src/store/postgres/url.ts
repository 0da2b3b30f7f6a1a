// What a caller asks of a store URL before any store is opened: is it a postgres:// URL, and
// how it reads without its password. Apart from connect.ts, which loads the driver, so that
// opening a LevelDB folder (src/store/index.ts) never loads pg (about 60 ms of a cold start).
export const isPostgresUrl = (s: string) => /^postgres(ql)?:\/\//i.test(s);

/** A URL with its password replaced, for messages (the URL may not even parse). */
export function redact(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@]*@/i, '$1:***@');
}
