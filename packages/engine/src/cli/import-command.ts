import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { AppError, type CliCommand, type CommandIo, createGroupCommit, openCache } from '@keel/core';
import { parse as parseCsv } from 'csv-parse';
import { ProductInputSchema } from '../catalog/product-schemas.ts';
import { upsertProduct } from '../catalog/product-service.ts';
import { readEngineConfig } from '../config.ts';
import { validatePart } from '../http/validate.ts';
import { findMerchant } from '../merchants/merchant-store.ts';
import { createPrincipalCache, type Principal, storesForKey } from '../merchants/principal.ts';
import { inTransaction, type WriteContext } from '../write.ts';
import { IMPORT_USAGE as USAGE } from './usage.ts';

const JSON_COLUMNS = new Set(['metadata', 'otherDetails', 'variants', 'imageUrls']);
const NUMBER_COLUMNS = new Set(['inventoryQuantity']);
const BOOLEAN_COLUMNS = new Set(['inStock']);

/** A CSV row (all text) as a product body: empty cells are absent, JSON columns parsed, `a|b` image lists split. */
export function csvRowToProduct(row: Record<string, string>): Record<string, unknown> {
  const product: Record<string, unknown> = {};
  for (const [column, raw] of Object.entries(row)) {
    const value = raw.trim();
    if (value === '') continue;
    if (column === 'imageUrls' && !value.startsWith('['))
      product.imageUrls = value
        .split('|')
        .map((u) => u.trim())
        .filter(Boolean);
    else if (JSON_COLUMNS.has(column)) {
      try {
        product[column] = JSON.parse(value);
      } catch {
        throw new AppError('VALIDATION_FAILED', `${column} is not valid JSON`, 400);
      }
    } else if (NUMBER_COLUMNS.has(column)) product[column] = /^-?\d+$/.test(value) ? Number(value) : value;
    else if (BOOLEAN_COLUMNS.has(column))
      product[column] = ['true', '1', 'yes'].includes(value.toLowerCase())
        ? true
        : ['false', '0', 'no'].includes(value.toLowerCase())
          ? false
          : value;
    else product[column] = value;
  }
  return product;
}

async function* rows(
  file: string,
  onBytes: (n: number) => void,
): AsyncGenerator<{ line: number; value: unknown; error?: string }> {
  const stream = fs.createReadStream(file);
  stream.on('data', (chunk) => onBytes(chunk.length));
  if (file.toLowerCase().endsWith('.jsonl') || file.toLowerCase().endsWith('.ndjson')) {
    let line = 0;
    for await (const text of readline.createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })) {
      line++;
      if (text.trim() === '') continue;
      try {
        yield { line, value: JSON.parse(text) };
      } catch {
        yield { line, value: undefined, error: 'not valid JSON' };
      }
    }
    return;
  }
  const parser = stream.pipe(
    parseCsv({ columns: true, bom: true, skip_empty_lines: true, relax_column_count: false, info: true }),
  );
  for await (const record of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    try {
      yield { line: record.info.lines, value: csvRowToProduct(record.record) };
    } catch (error) {
      yield { line: record.info.lines, value: undefined, error: (error as Error).message };
    }
  }
}

function progressBar(io: CommandIo, total: number) {
  let done = 0;
  let last = 0;
  const draw = (final = false) => {
    const ratio = total === 0 ? 1 : Math.min(1, done / total);
    const width = 30;
    const filled = Math.round(ratio * width);
    const line = `importing [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round(ratio * 100)}%`;
    if (io.stderr.isTTY) io.stderr.write(`\r${line}${final ? '\n' : ''}`);
    else if (final || Date.now() - last > 2000) {
      io.stderr.write(`${line}\n`);
      last = Date.now();
    }
  };
  return {
    advance(bytes: number) {
      done += bytes;
    },
    tick: () => draw(),
    finish: () => {
      done = total;
      draw(true);
    },
  };
}

/** `keel import products FILE`: every row through `upsertProduct` (the REST rules, events with source `service`), one transaction per row. */
export const importCommand: CliCommand = {
  name: 'import',
  usage: USAGE,
  async run(args, io) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { merchant: { type: 'string' }, store: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const [what, file] = positionals;
    if (what !== 'products' || !file) throw Object.assign(new Error(`usage: keel ${USAGE}`), { name: 'UsageError' });
    if (!values.merchant) throw Object.assign(new Error('--merchant MERCHANT_ID is required'), { name: 'UsageError' });
    if (!/\.(csv|jsonl|ndjson)$/i.test(file))
      throw Object.assign(new Error('the file must end in .csv or .jsonl'), { name: 'UsageError' });
    const total = fs.statSync(path.resolve(file)).size;

    const config = readEngineConfig(io.env);
    const { openEngineDatabase } = await import('../db/open.ts');
    const database = await openEngineDatabase(config);
    const cache = openCache({ redisUrl: config.core.redisUrl, service: 'engine' });
    const summary = { created: 0, updated: 0, rejected: 0, rejections: [] as { line: number; error: string }[] };
    try {
      await createPrincipalCache(database.db, cache.cache);
      const merchant = await findMerchant(database.db, values.merchant);
      if (!merchant)
        throw Object.assign(new Error(`merchant ${values.merchant} does not exist`), { name: 'UsageError' });
      const principal: Principal = {
        keyId: 'cli-import',
        merchantId: merchant.id,
        scope: 'merchant',
        stores: await storesForKey(database.db, {
          merchant_id: merchant.id,
          scope: 'merchant',
          store_ids: '[]',
        } as never),
      };
      // Fail once, before any row is written, when rows could not name a store of this merchant.
      if (values.store && !principal.stores.has(values.store.toLowerCase()))
        throw Object.assign(new Error(`--store ${values.store} is not a store of merchant ${merchant.id}`), {
          name: 'UsageError',
        });
      // The write path of the engine; the running engine's delivery worker finds the queued messages by polling.
      const writes: WriteContext = { db: database.db, writes: createGroupCommit(database.db), notifyOutbox: () => {} };
      const bar = progressBar(io, total);
      const timer = setInterval(bar.tick, 200);
      let first = true;
      try {
        for await (const row of rows(file, bar.advance)) {
          if (first && !values.store && !row.error && !(row.value as { storeId?: unknown } | undefined)?.storeId)
            throw Object.assign(
              new Error('the rows name no store: pass --store STORE_ID, or give every row a storeId column'),
              { name: 'UsageError' },
            );
          first = false;
          try {
            if (row.error) throw new AppError('VALIDATION_FAILED', row.error, 400);
            const body = { ...(values.store ? { storeId: values.store } : {}), ...(row.value as object) };
            const input = validatePart(ProductInputSchema, body, 'row');
            const outcome = await inTransaction(writes, (trx, sink) =>
              upsertProduct(trx, sink, principal, input, 'service'),
            );
            summary[outcome.mode]++;
          } catch (error) {
            if (!(error instanceof AppError) || error.statusCode >= 500) throw error;
            summary.rejected++;
            if (summary.rejections.length < 1000) summary.rejections.push({ line: row.line, error: error.message });
          }
        }
      } finally {
        clearInterval(timer);
        bar.finish();
      }
    } finally {
      await cache.close();
      await database.close();
    }
    for (const rejection of summary.rejections.slice(0, 20))
      io.stderr.write(`line ${rejection.line}: ${rejection.error}\n`);
    if (summary.rejections.length > 20) io.stderr.write(`… and ${summary.rejected - 20} more rejected rows\n`);
    io.stdout.write(
      values.json
        ? `${JSON.stringify({ created: summary.created, updated: summary.updated, rejected: summary.rejected, rejections: summary.rejections })}\n`
        : `created ${summary.created}, updated ${summary.updated}, rejected ${summary.rejected}\n`,
    );
    return summary.rejected > 0 ? 1 : 0;
  },
};
