/** The node's own secrets: the VC issuer key and the HMAC keys (current first, prior kept so old MACs verify). */
export interface NodeKeys {
  issuer: { publicKey: string; privateKey: string; did: string };
  hmac: Array<{ signingKeyId: string; key: Buffer; createdAt: number }>;
}

/** The key new HMACs are made with. */
export const currentHmac = (keys: NodeKeys) => keys.hmac[0];
