import autocannon from 'autocannon';
import { startGeo } from '../../../bench/lib/geo-process.ts';

const geo = await startGeo({ NODE_OPTIONS: '--cpu-prof --cpu-prof-dir=/tmp/prof2' });
const events = Array.from({ length: 100 }, (_, i) => ({
  type: i % 5 === 0 ? 'event' : 'pageview',
  ...(i % 5 === 0 ? { name: 'add', properties: { sku: 'S' + i, qty: 1 } } : {}),
  url: `https://shop.example/products/${i}?utm_source=newsletter`,
  referrer: 'https://www.google.com/',
}));
const body = JSON.stringify({ consent: { analytics: true }, events });
const r = await autocannon({
  url: geo.url,
  connections: 32,
  duration: 8,
  requests: [
    {
      method: 'POST',
      path: '/api/v2/geo/events',
      headers: { 'content-type': 'application/json', 'x-site-token': geo.boot.siteToken },
      body,
    },
  ],
});
console.log(r.requests.average * 100, r.non2xx);
await geo.stop();
