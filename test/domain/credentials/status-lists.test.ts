// Status lists in-process (PROTOCOL 8.7): the bitstring at 131,072 entries through GZIP with the
// spec's own vectors, and conformance of the node's list credentials and entries with the W3C
// reference library (@digitalbazaar/vc-bitstring-status-list 2.0.1) plus our own minimum-length
// check, which that library does not make; the verifier refuses a short or tampered list.
import { gunzipSync } from 'node:zlib';
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import { createVerifyCryptosuite } from '@digitalbazaar/eddsa-jcs-2022-cryptosuite';
import { checkStatus, decodeList } from '@digitalbazaar/vc-bitstring-status-list';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runNow } from '../../../src/core/checking.js';
import { getStatusBit, setStatusBit, STATUS_LIST_LENGTH } from '../../../src/core/status-list.js';
import { documentLoader, issueStatusListCredential } from '../../../src/domain/credentials/credentials.js';
import { changeStatus, decodeBits, encodeBits } from '../../../src/domain/credentials/status-lists.js';
import { Checks } from '../../../verifier/report.js';
import { statusListChecking } from '../../../verifier/status-list.js';
import { decide } from '../../helpers/flows.js';
import { testNode, type TestNode } from '../../helpers/app.js';

const inflate = (gz: Uint8Array, max: number) => new Uint8Array(gunzipSync(gz, { maxOutputLength: max }));

describe('the bitstring', () => {
  it('round-trips 131,072 entries through GZIP, index 0 the high bit of byte 0 (the spec vectors)', () => {
    const bits = new Uint8Array(STATUS_LIST_LENGTH / 8);
    // Bitstring Status List §2.2 Example 3: the empty list of 131,072 entries.
    expect(encodeBits(bits)).toBe('uH4sIAAAAAAAAA-3BMQEAAADCoPVPbQwfoAAAAAAAAAAAAAAAAAAAAIC3AYbSVKsAQAAA');
    setStatusBit(bits, 94567, true);
    const encoded = encodeBits(bits);
    expect(encoded).toBe('uH4sIAAAAAAAAA-3OMQ0AAAgDsOHfNBp2kZBWQRMAAAAAAAAAAAAAAL6Z6wAAAAAAtQVQdb5gAEAAAA');
    const back = decodeBits(encoded);
    expect(back.length * 8).toBe(STATUS_LIST_LENGTH);
    expect(back[11820]).toBe(0x01);
    expect(getStatusBit(back, 94567)).toBe(true);
    expect(getStatusBit(back, 94566)).toBe(false);
    setStatusBit(back, 0, true);
    expect(back[0]).toBe(0x80);
    setStatusBit(back, 0, false);
    expect(back[0]).toBe(0);
  });
});

describe('conformance with @digitalbazaar/vc-bitstring-status-list', () => {
  let node: TestNode;
  beforeEach(async () => {
    node = await testNode({ allowAnonymousPropose: false, sameIpCollusionCheck: false });
  });
  afterEach(async () => node.close());

  const credentialOf = async (answer: { credentialUrl?: string; judgment?: { credentialUrl?: string } }) =>
    (await node.app.inject({ url: answer.credentialUrl ?? answer.judgment!.credentialUrl! })).json();
  const listOf = async (purpose: string) => (await node.app.inject({ url: `/credentials/status/${purpose}` })).json();
  // The reference library dereferences the list through the document loader: here, the node's answers.
  const loaderWith = (lists: Record<string, unknown>) => async (url: string) =>
    url in lists ? { contextUrl: null, documentUrl: url, document: lists[url] } : documentLoader(url);
  const suite = new DataIntegrityProof({ cryptosuite: createVerifyCryptosuite() });

  it("passes checkStatus before and after a revocation, and the node's lists hold at least 131,072 entries", async () => {
    const { answers } = await decide(node, 'brief');
    const credential = await credentialOf(answers[0]);
    const lists = { revocation: await listOf('revocation'), suspension: await listOf('suspension') };
    const byUrl = Object.fromEntries(Object.values(lists).map((l) => [l.id, l]));
    const before = await checkStatus({ credential, documentLoader: loaderWith(byUrl), suite });
    expect(before.verified, JSON.stringify(before.error)).toBe(true);
    expect(before.results.map((r: { status: boolean }) => r.status)).toEqual([false, false]);
    for (const l of Object.values(lists)) expect((await decodeList({ encodedList: l.credentialSubject.encodedList })).length).toBeGreaterThanOrEqual(131_072);

    const judgmentId = credential.credentialSubject.id.split(':').at(-1);
    await changeStatus(node.app.akas, { action: 'revoke', reason: 'test', ids: [judgmentId] });
    const after = await listOf('revocation');
    const checked = await checkStatus({ credential, documentLoader: loaderWith({ ...byUrl, [after.id]: after }), suite });
    expect(checked.verified).toBe(true);
    expect(checked.results.map((r: { status: boolean }) => r.status)).toEqual([true, false]);
  });

  it('refuses, in the reference library and in ours, a list whose encodedList was changed', async () => {
    const { answers } = await decide(node, 'brief');
    const credential = await credentialOf(answers[0]);
    const list = await listOf('revocation');
    const bits = decodeBits(list.credentialSubject.encodedList);
    setStatusBit(bits, Number(credential.credentialStatus[0].statusListIndex), true);
    const tampered = { ...list, credentialSubject: { ...list.credentialSubject, encodedList: encodeBits(bits) } };
    const suspension = await listOf('suspension');
    const r = await checkStatus({ credential, documentLoader: loaderWith({ [list.id]: tampered, [suspension.id]: suspension }), suite });
    expect(r.verified).toBe(false);
    const c = new Checks();
    expect(runNow(statusListChecking(c, tampered, { issuers: [node.keys.issuer.did], inflate }))).toBeUndefined();
    expect(c.list[0]).toMatchObject({ id: 'status.list', valid: false });
    expect(runNow(statusListChecking(new Checks(), list, { issuers: [node.keys.issuer.did], inflate }))).toBeDefined();
  });

  it('refuses a list of fewer than 131,072 entries, a bound the reference library does not check (STATUS_LIST_LENGTH_ERROR)', async () => {
    await decide(node, 'brief');
    const list = await listOf('revocation');
    const short = { ...list, credentialSubject: { ...list.credentialSubject, encodedList: encodeBits(new Uint8Array(1024)) } };
    delete short.proof;
    const signed = await issueStatusListCredential(node.keys, short, node.clock.now());
    const c = new Checks();
    expect(runNow(statusListChecking(c, signed, { issuers: [node.keys.issuer.did], inflate }))).toBeUndefined();
    expect(c.list[0].why).toContain('STATUS_LIST_LENGTH_ERROR');
  });
});
