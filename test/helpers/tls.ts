/**
 * A throwaway self-signed certificate for TLS tests, made by the real `openssl` (valid one day, RSA 2048,
 * no passphrase). Clients trust it only when given it as `ca`, so it also serves "verification fails"
 * cases. The caller owns `dir` and removes it.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export interface SelfSignedCert {
  /** PEM files in `dir`. */
  cert: string;
  key: string;
}

/** `subject` e.g. `/CN=localhost`; `ipSan` adds `subjectAltName=IP:<ipSan>` so hostname checks pass. */
export function makeSelfSignedCert(dir: string, subject: string, ipSan?: string): SelfSignedCert {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const args = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1'];
  args.push('-subj', subject);
  if (ipSan !== undefined) args.push('-addext', `subjectAltName=IP:${ipSan}`);
  execFileSync('openssl', args, { stdio: 'ignore' });
  return { cert, key };
}
