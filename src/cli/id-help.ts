// The detail of `acp-group id --help` (and of a bare `acp-group id`), apart from id.ts so the
// command table can show it without loading the identity code.
export const ID_HELP = `  create <aid> [--ap DOMAIN | --ap-url URL] [--no-passphrase] [--ca-file FILE] [--insecure-tls]
         Make a P-384 key and CSR, get the certificate from the access point
         (default https://acp3.<domain of aid>), store them under <state>/identities/<aid>/.
         The key is encrypted with ACP_SEED_PASSWORD (or network.seedPassword in --config);
         without one, --no-passphrase is required to store it unencrypted.
  renew  <aid> [--ap DOMAIN | --ap-url URL] [--ca-file FILE] [--insecure-tls]
         Certify the same key again (an expired or expiring certificate); the folder keeps its layout.
  list   [--json]                 Identities in the state dir with their certificate's validity.
  show   <aid> [--json]           Subject, issuer, validity, SHA-256 fingerprint, files, and the
                                  agent.md last published for it (or why none is).
  import (--key FILE --cert FILE [--aid AID] | --sdk-dir DIR) [--no-passphrase]
         Copy an existing key + certificate (or an official SDK folder <aid>/private,public).
  import --from-acp-ts DIR [--aid AID]... [--seed-password TEXT]
         Every identity the official SDK (acp-ts) keeps in DIR (its storage with AIDs/, an AIDs
         folder, or one identity's folder; evol keeps them in ~/.acp-storage, the SDK in ~/acp).
         Keys open with --seed-password, ACP_SEED_PASSWORD or the SDK's default empty seed password,
         and are stored encrypted with ACP_SEED_PASSWORD, else under the password that opened them.

Common: [--state-dir DIR] [--config FILE]  (default state dir: config stateDir, ACP_GROUP_STATE_DIR, ~/.acp-group/state)`;
