# Checks a DSSE envelope (or the one inside a Sigstore bundle) under a raw Ed25519 public key with
# securesystemslib alone (Debian bookworm's 0.26 has no DSSE module, so the PAE is built here).
# Usage: /usr/bin/python3 verify_dsse.py bundle-or-envelope.json <ed25519 public key, 64 hex>
import base64, json, sys
from securesystemslib.signer import SSlibKey, Signature

doc = json.load(open(sys.argv[1]))
env = doc.get("dsseEnvelope", doc)
def b64(s):
    return base64.b64decode(s + "=" * (-len(s) % 4), altchars=b"-_" if ("-" in s or "_" in s) else None)
payload, ptype = b64(env["payload"]), env["payloadType"].encode()
pae = b"DSSEv1 %d %s %d %s" % (len(ptype), ptype, len(payload), payload)
key = SSlibKey("00", "ed25519", "ed25519", {"public": sys.argv[2]})  # securesystemslib wants a hex keyid; DSSE's is a hint only
key.verify_signature(Signature("00", b64(env["signatures"][0]["sig"]).hex()), pae)  # raises UnverifiedSignatureError
stmt = json.loads(payload)
print("OK", stmt["_type"], stmt["predicateType"])
