// The Digital Bazaar VC packages are ES modules without type declarations; these are the
// parts akas calls (issuing in src/domain/credentials/credentials.ts, interop checks in tests).
declare module '@digitalbazaar/vc' {
  export function issue(options: {
    credential: object;
    suite: unknown;
    documentLoader: (url: string) => Promise<unknown>;
    now?: string | Date;
  }): Promise<Record<string, unknown>>;
  export function verifyCredential(options: {
    credential: object;
    suite: unknown;
    documentLoader: (url: string) => Promise<unknown>;
    now?: string | Date;
    /** Required by the library for a credential that has credentialStatus (a standing, PROTOCOL 8.9). */
    // biome-ignore lint/suspicious/noExplicitAny: the status checker is any library's (@digitalbazaar/vc-bitstring-status-list here)
    checkStatus?: (options: any) => Promise<unknown>;
  }): Promise<{ verified: boolean; error?: unknown; results?: unknown[]; statusResult?: unknown }>;
}
declare module '@digitalbazaar/data-integrity' {
  export class DataIntegrityProof {
    constructor(options: { signer?: unknown; cryptosuite: unknown; date?: string | Date | number | null });
  }
}
declare module '@digitalbazaar/eddsa-jcs-2022-cryptosuite' {
  export function createSignCryptosuite(): unknown;
  export function createVerifyCryptosuite(): unknown;
}
declare module '@digitalbazaar/ed25519-multikey' {
  export function generate(options?: { id?: string; controller?: string; seed?: Uint8Array }): Promise<{
    id: string;
    controller: string;
    publicKeyMultibase: string;
    signer(): { id: string; algorithm: string; sign(o: { data: Uint8Array }): Promise<Uint8Array> };
  }>;
  export function from(key: object): Promise<unknown>;
}

// The W3C reference library for Bitstring Status List (a dev dependency: the conformance tests only).
declare module '@digitalbazaar/vc-bitstring-status-list' {
  export function checkStatus(options: {
    credential: unknown;
    documentLoader: (url: string) => Promise<unknown>;
    suite: unknown;
    verifyBitstringStatusListCredential?: boolean;
    verifyMatchingIssuers?: boolean;
  }): Promise<{ verified: boolean; results: Array<{ verified: boolean; status: boolean }>; error?: unknown }>;
  export function decodeList(options: { encodedList: string }): Promise<{ length: number; getStatus(index: number): boolean }>;
}
