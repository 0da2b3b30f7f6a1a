// The witness's key file: one line, its C2SP signer key string
// ("PRIVATE+KEY+<name>+<key ID>+base64(0x04 || seed)"), mode 0600. Made at the first start
// (the name is given then and kept); a plain Ed25519 note signer key (0x01, as Go's
// note.GenerateKey writes it) is read too.
import { existsSync, readFileSync } from 'node:fs';
import { cosignerSignerKey, generateKeyPair, isNoteKeyName, parseCosignerSignerKey, type CosignerSigner } from '../core/index.js';
import { assertPrivateMode, writePrivateFile } from '../store/index.js';

export class WitnessKeyError extends Error {
  override readonly name = 'WitnessKeyError';
}

/** The witness key of `path`, made (with `name`) when the file does not exist yet. */
export function loadOrCreateWitnessKey(path: string, name?: string): CosignerSigner & { created: boolean } {
  const created = !existsSync(path);
  if (created) {
    if (!name)
      throw new WitnessKeyError(`${path} does not exist: give --name NAME (a schema-less URL such as witness.example.com/w1) to make a new witness key there`);
    if (!isNoteKeyName(name)) throw new WitnessKeyError(`the witness name ${JSON.stringify(name)} may hold no space and no '+'`);
    writePrivateFile(path, cosignerSignerKey(name, generateKeyPair().privateKey) + '\n');
  } else {
    try {
      assertPrivateMode(path);
    } catch (e) {
      throw new WitnessKeyError((e as Error).message);
    }
  }
  const key = parseCosignerSignerKey(readFileSync(path, 'utf8').trim());
  if (!key) throw new WitnessKeyError(`${path} does not hold a witness signer key (PRIVATE+KEY+NAME+KEYID+KEY)`);
  if (name && name !== key.name) throw new WitnessKeyError(`${path} is the key of ${key.name}, not ${name}`);
  return { ...key, created };
}
