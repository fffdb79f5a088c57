import { openDatabase } from '@keel/core';
import { prepareGeoDatabase } from '../src/app.ts';

const d = await openDatabase<any>({ url: 'postgres://postgres@127.0.0.1:5432/test', schema: 'geo' });
try {
  console.log(await prepareGeoDatabase(d.db));
} catch (e) {
  console.log('ERR', (e as Error).message);
}
await d.close();
