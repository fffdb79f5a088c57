// X.509 certificates for TLS tests, built with node:crypto alone (no openssl binary, no extra package): EC P-256
// keys and certificates DER-encoded by hand and signed ECDSA-SHA256. `certificateAuthority()` makes a CA; its
// `issue()` makes a server (SAN 127.0.0.1 and localhost) or client certificate. PEM out, for node:tls and undici.
import { generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, ...parts: Buffer[]): Buffer => {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};
const seq = (...parts: Buffer[]) => tlv(0x30, ...parts);

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [a * 40 + b];
  for (const n of rest) {
    const chunk: number[] = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

const utcTime = (date: Date) =>
  tlv(0x17, Buffer.from(`${date.toISOString().slice(2, 19).replace(/[-T:]/g, '')}Z`, 'ascii'));
const name = (commonName: string) => seq(tlv(0x31, seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
const ecdsaSha256 = seq(oid('1.2.840.10045.4.3.2'));
const extension = (id: string, critical: boolean, value: Buffer) =>
  seq(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value));

function toPem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

export interface IssuedCertificate {
  cert: string;
  key: string;
}

export interface CertificateAuthority extends IssuedCertificate {
  issue(commonName: string, kind: 'server' | 'client'): IssuedCertificate;
}

function build(
  subject: string,
  subjectKey: KeyObject,
  issuer: string,
  issuerKey: KeyObject,
  extensions: Buffer[],
): string {
  const now = Date.now();
  const serial = randomBytes(12);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    tlv(0x02, serial),
    ecdsaSha256,
    name(issuer),
    seq(utcTime(new Date(now - 60_000)), utcTime(new Date(now + 86_400_000))),
    name(subject),
    subjectKey.export({ type: 'spki', format: 'der' }),
    tlv(0xa3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, issuerKey);
  return toPem('CERTIFICATE', seq(tbs, ecdsaSha256, tlv(0x03, Buffer.from([0]), signature)));
}

const keyPem = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }).toString();

/** A fresh self-signed CA whose `issue` signs server and client certificates valid for a day. */
export function certificateAuthority(commonName = 'Keel Test CA'): CertificateAuthority {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const basicCa = extension('2.5.29.19', true, seq(tlv(0x01, Buffer.from([0xff]))));
  const caUsage = extension('2.5.29.15', true, tlv(0x03, Buffer.from([1, 0x06]))); // keyCertSign, cRLSign
  return {
    cert: build(commonName, publicKey, commonName, privateKey, [basicCa, caUsage]),
    key: keyPem(privateKey),
    issue(subject, kind) {
      const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const usage = extension('2.5.29.15', true, tlv(0x03, Buffer.from([7, 0x80]))); // digitalSignature
      const purpose = oid(kind === 'server' ? '1.3.6.1.5.5.7.3.1' : '1.3.6.1.5.5.7.3.2');
      const extendedUsage = extension('2.5.29.37', false, seq(purpose));
      const altNames =
        kind === 'server'
          ? [
              extension(
                '2.5.29.17',
                false,
                seq(tlv(0x87, Buffer.from([127, 0, 0, 1])), tlv(0x82, Buffer.from('localhost', 'ascii'))),
              ),
            ]
          : [];
      return {
        cert: build(subject, pair.publicKey, commonName, privateKey, [usage, extendedUsage, ...altNames]),
        key: keyPem(pair.privateKey),
      };
    },
  };
}
