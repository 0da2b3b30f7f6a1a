// undici's request(), for the commands that stream blobs (cas put | get, artifact checks),
// loaded when first asked for: it costs about 100 ms to load and `akas --help` must stay fast.
// Inside the bundle's lazy chunk (scripts/bundle.mjs) undici is a CommonJS module whose
// exports arrive as the default export alone; under plain Node `default` is module.exports too.
export async function undiciRequest(): Promise<typeof import('undici').request> {
  return (await import('undici')).default.request;
}
