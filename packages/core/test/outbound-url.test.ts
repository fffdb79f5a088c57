import assert from 'node:assert/strict';
import type dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import {
  checkOutboundUrl,
  checkOutboundUrlResolves,
  createSafeAgent,
  isPublicAddress,
  safePost,
} from '../src/index.ts';
import { SSRF_URLS } from '../src/testing.ts';

const strict = { allowPrivate: false };

/** A resolver double: every name resolves to the given addresses. */
function resolverFor(addresses: string[]): typeof dns.lookup {
  return ((_host: string, _options: unknown, callback: (e: null, a: dns.LookupAddress[]) => void) =>
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    )) as never;
}

describe('outbound URL policy', () => {
  test('private, loopback, link-local, CGNAT, multicast, reserved and v4-mapped addresses are not public', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '240.0.0.1',
      '192.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:8.8.8.8',
      '64:ff9b::a00:1',
      '2002:a00:1::',
      '2001:db8::1',
    ]) {
      assert.equal(isPublicAddress(address), false, address);
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111'])
      assert.equal(isPublicAddress(address), true, address);
  });

  test('IP literals, localhost, internal names, http and credentials are rejected without DNS', () => {
    for (const url of [
      'https://127.0.0.1/hook',
      'https://[::1]/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://10.0.0.5/',
      'https://[::ffff:127.0.0.1]/',
      'https://2130706433/',
      'https://0x7f.0.0.1/',
      'https://localhost/',
      'https://api.localhost/',
      'https://printer.local/',
      'https://db.internal/',
      'https://intranet/',
      'http://example.com/',
      'ftp://example.com/',
      'https://user:pass@example.com/',
      'not a url',
      '/relative',
    ]) {
      assert.throws(
        () => checkOutboundUrl(url, strict),
        (e: { code: string; statusCode: number }) => e.code === 'OUTBOUND_URL_REJECTED' && e.statusCode === 400,
        url,
      );
    }
    assert.equal(checkOutboundUrl('https://hooks.example.com/x', strict).hostname, 'hooks.example.com');
    assert.equal(checkOutboundUrl('https://8.8.8.8/x', strict).hostname, '8.8.8.8');
  });

  test('every IPv6 embedding of an IPv4 address, and every IPv4 spelling of a private one, is refused', () => {
    // Save time: IP-literal hosts in URLs, as an attacker would spell them.
    for (const url of SSRF_URLS) {
      assert.throws(
        () => checkOutboundUrl(url, strict),
        (e: { code: string; statusCode: number }) => e.code === 'OUTBOUND_URL_REJECTED' && e.statusCode === 400,
        url,
      );
    }
    // The same blocks as addresses (what a resolver may answer for a name, checked at save and connect time).
    for (const address of [
      '::127.0.0.1',
      '::7f00:1',
      '::10.0.0.1',
      '::8.8.8.8',
      '::ffff:127.0.0.1',
      '::ffff:0:7f00:1',
      '64:ff9b::127.0.0.1',
      '64:ff9b::8.8.8.8',
      '64:ff9b:1::a00:1',
      '64:ff9b:1:ffff::1',
      '2002:7f00:1::1',
      '2002:a9fe:a9fe::1',
      '2001:0:4136:e378:8000:63bf:80ff:fffe',
      '2001::1',
    ]) {
      assert.equal(isPublicAddress(address), false, address);
    }
  });

  test('a name resolving to an IPv4-compatible IPv6 address is refused at save time and by the connector', async (t) => {
    await assert.rejects(
      checkOutboundUrlResolves('https://compat.example.com/', strict, resolverFor(['::7f00:1'])),
      /private/,
    );
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const agent = createSafeAgent({ ...strict, resolve: resolverFor(['::127.0.0.1']) });
    t.after(() => agent.close());
    await assert.rejects(
      safePost(agent, `https://compat.example.com:${port}/`, '{}', {}, { ...strict, timeoutMs: 2000 }),
      (e: { code?: string; cause?: { code?: string } }) => (e.code ?? e.cause?.code) === 'EADDRNOTPUBLIC',
    );
    await assert.rejects(
      safePost(agent, `https://[::127.0.0.1]:${port}/`, '{}', {}, { ...strict, timeoutMs: 2000 }),
      /not allowed/,
    );
  });

  test('KEEL_ALLOW_PRIVATE_URLS lets loopback and plain http through', () => {
    assert.equal(checkOutboundUrl('http://127.0.0.1:9000/hook', { allowPrivate: true }).port, '9000');
    assert.throws(() => checkOutboundUrl('ftp://127.0.0.1/', { allowPrivate: true }));
  });

  test('a name that resolves to any private address is rejected at save time', async () => {
    await assert.rejects(
      checkOutboundUrlResolves('https://rebind.example.com/', strict, resolverFor(['93.184.216.34', '10.0.0.1'])),
      /private/,
    );
    await assert.rejects(
      checkOutboundUrlResolves('https://meta.example.com/', strict, resolverFor(['169.254.169.254'])),
      /private/,
    );
    const ok = await checkOutboundUrlResolves('https://public.example.com/', strict, resolverFor(['93.184.216.34']));
    assert.equal(ok.hostname, 'public.example.com');
  });

  test('the connector refuses names that resolve to loopback, and IP literals, at connect time', async (t) => {
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const port = (server.address() as AddressInfo).port;
    // A public-looking name that resolves to loopback (DNS rebinding): refused by the connector's own lookup.
    const agent = createSafeAgent({ ...strict, resolve: resolverFor(['127.0.0.1']) });
    t.after(() => agent.close());
    await assert.rejects(
      safePost(agent, `https://rebind.example.com:${port}/`, '{}', {}, { ...strict, timeoutMs: 2000 }),
      (e: { code?: string; cause?: { code?: string } }) => (e.code ?? e.cause?.code) === 'EADDRNOTPUBLIC',
    );
    await assert.rejects(
      safePost(agent, `https://127.0.0.1:${port}/`, '{}', {}, { ...strict, timeoutMs: 2000 }),
      /not allowed/,
    );
    const open = createSafeAgent({ allowPrivate: true });
    t.after(() => open.close());
    const result = await safePost(open, `http://127.0.0.1:${port}/`, '{}', {}, { allowPrivate: true, timeoutMs: 2000 });
    assert.equal(result.statusCode, 200);
  });

  test('redirects are not followed and slow receivers time out', async (t) => {
    let redirectedTo = 0;
    const server = http.createServer((req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: '/target' });
        return res.end();
      }
      if (req.url === '/target') redirectedTo++;
      if (req.url === '/slow') return setTimeout(() => res.end('late'), 1500);
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      server.closeAllConnections();
      server.close();
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agent = createSafeAgent({ allowPrivate: true });
    t.after(() => agent.close());
    const redirect = await safePost(agent, `${base}/redirect`, '{}', {}, { allowPrivate: true, timeoutMs: 2000 });
    assert.equal(redirect.statusCode, 302);
    assert.equal(redirectedTo, 0);
    await assert.rejects(safePost(agent, `${base}/slow`, '{}', {}, { allowPrivate: true, timeoutMs: 300 }));
  });
});
