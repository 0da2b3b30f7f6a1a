// Media types: what a route documents it answers beside JSON, and whether a caller asked for a
// page (a browser) or JSON (an agent). The explorer's pages and the API's discovery documents
// answer both from one route.
import type { FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';

/** A response with another media type than JSON (text, HTML, bytes, an event stream). */
export const Media = (mediaType: string, schema: TSchema | Record<string, unknown>, description: string) => ({
  description,
  content: { [mediaType]: { schema } },
});

/** The q of a media range in an Accept header (0 when absent). */
function quality(accept: string, type: string): number {
  let best = 0;
  let specificity = -1;
  for (const part of accept.split(',')) {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    const [t, s] = range.trim().split('/');
    const [wantT, wantS] = type.split('/');
    const spec = t === wantT && s === wantS ? 2 : t === wantT && s === '*' ? 1 : t === '*' && s === '*' ? 0 : -1;
    if (spec < specificity || spec < 0) continue;
    const q = Number(
      params
        .map((x) => x.trim())
        .find((x) => x.startsWith('q='))
        ?.slice(2) ?? 1,
    );
    if (spec > specificity || q > best) [best, specificity] = [Number.isFinite(q) ? q : 0, spec];
  }
  return best;
}

/** HTML only for a caller that asks for it at least as much as JSON (a browser); JSON otherwise. */
export const wantsHtml = (request: FastifyRequest) => {
  const accept = request.headers.accept ?? '*/*';
  return quality(accept, 'text/html') > quality(accept, 'application/json');
};
