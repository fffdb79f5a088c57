import { once } from 'node:events';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type ExcelJS from 'exceljs';
import type PdfMake from 'pdfmake';

export const EXPORT_FORMATS = ['json', 'csv', 'ndjson', 'xlsx', 'pdf'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pdf: 'application/pdf',
};

/** A row for export: a flat object of column → scalar (objects are pre-serialized as JSON text). */
export type ExportRow = Record<string, string | number | boolean | null>;

/**
 * Neutralises spreadsheet formulas: a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is
 * prefixed with `'`, so a spreadsheet shows it as text instead of evaluating it (CSV injection).
 */
export function neutraliseFormula(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

function cellValue(value: string | number | boolean | null): string | number | boolean | null {
  return typeof value === 'string' ? neutraliseFormula(value) : value;
}

/**
 * exceljs and pdfmake are imported on the first XLSX or PDF export (together they cost about half a second of CPU
 * to load), so a geo process that never writes one — a `keel geo` command, most test processes — does not pay it.
 */
let excel: Promise<typeof ExcelJS> | undefined;
let pdf: Promise<typeof PdfMake> | undefined;

/** A CommonJS module's exports, which Node's `import()` hands over as `default`. */
function commonJsExports<T>(module: unknown): T {
  return (module as { default: T }).default;
}

function loadExcel() {
  excel ??= import('exceljs').then((module) => commonJsExports<typeof ExcelJS>(module));
  return excel;
}

function loadPdfmake() {
  pdf ??= import('pdfmake').then((module) => {
    const pdfmake = commonJsExports<typeof PdfMake>(module);
    pdfmake.setFonts({
      Helvetica: {
        normal: 'Helvetica',
        bold: 'Helvetica-Bold',
        italics: 'Helvetica-Oblique',
        bolditalics: 'Helvetica-BoldOblique',
      },
    });
    pdfmake.setUrlAccessPolicy(() => false); // reports never load anything from the network
    return pdfmake;
  });
  return pdf;
}

/**
 * Writes rows in one format into `sink`, pulling them from an async iterable page by page, so memory stays flat
 * whatever the row count (PDF excepted: pdfmake lays out the whole table, so PDF exports are capped in rows).
 */
export async function writeExport(
  format: ExportFormat,
  columns: readonly string[],
  rows: AsyncIterable<ExportRow>,
  sink: Writable,
  options: { title: string; maxPdfRows: number },
): Promise<number> {
  let count = 0;
  switch (format) {
    case 'ndjson':
    case 'json': {
      // A sink whose store failed (the database went away) never drains: fail instead of waiting forever.
      const write = (text: string) => {
        if (sink.errored || sink.destroyed) throw sink.errored ?? new Error('the export sink is closed');
        return sink.write(text) ? undefined : once(sink, 'drain').then(() => undefined);
      };
      if (format === 'json') await write('[');
      for await (const row of rows) {
        await write(format === 'json' ? `${count > 0 ? ',' : ''}\n${JSON.stringify(row)}` : `${JSON.stringify(row)}\n`);
        count++;
      }
      if (format === 'json') await write(count > 0 ? '\n]\n' : ']\n');
      await new Promise<void>((resolve, reject) =>
        sink.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
      return count;
    }
    case 'csv': {
      // escape_formulas prefixes =, +, -, @, tab and CR with a quote, exactly as neutraliseFormula does.
      const csv = stringify({
        header: true,
        columns: [...columns],
        escape_formulas: true,
        cast: { boolean: (v) => (v ? 'true' : 'false') },
      });
      const feed = (async function* () {
        for await (const row of rows) {
          count++;
          yield row;
        }
      })();
      await pipeline(feed, csv, sink);
      return count;
    }
    case 'xlsx': {
      const ExcelJS = await loadExcel();
      const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
        stream: sink,
        useStyles: false,
        useSharedStrings: false,
      });
      const sheet = workbook.addWorksheet(options.title.slice(0, 31).replace(/[\\/?*[\]:]/g, ' ') || 'export');
      sheet.addRow([...columns]).commit();
      for await (const row of rows) {
        sheet.addRow(columns.map((column) => cellValue(row[column] ?? null))).commit();
        count++;
        // exceljs's stream never pushes back: give the zip's deflate a turn now and then so the
        // compressed bytes drain into the sink instead of piling up in memory.
        if (count % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      sheet.commit();
      await workbook.commit();
      return count;
    }
    case 'pdf': {
      const body: string[][] = [[...columns]];
      for await (const row of rows) {
        if (count >= options.maxPdfRows) break;
        body.push(columns.map((column) => String(row[column] ?? '').slice(0, 200)));
        count++;
      }
      const pdfmake = await loadPdfmake();
      const doc = pdfmake.createPdf({
        pageOrientation: columns.length > 6 ? 'landscape' : 'portrait',
        pageSize: 'A4',
        defaultStyle: { font: 'Helvetica', fontSize: 7 },
        content: [
          { text: options.title, fontSize: 14, bold: true, margin: [0, 0, 0, 8] },
          { table: { headerRows: 1, body }, layout: 'lightHorizontalLines' },
        ],
      });
      const stream = (await doc.getStream()) as NodeJS.ReadableStream & { end(): void };
      const done = pipeline(stream, sink);
      stream.end();
      await done;
      return count;
    }
  }
}

/** A Writable that hands the bytes on in fixed-size chunks (each chunk is stored as one row). */
export function chunkingSink(
  chunkBytes: number,
  store: (chunk: Buffer) => Promise<void>,
): Writable & { bytes: number } {
  let buffered: Buffer[] = [];
  let size = 0;
  const sink = new Writable({
    highWaterMark: chunkBytes,
    write(data: Buffer, _encoding, callback) {
      buffered.push(data);
      size += data.length;
      sink.bytes += data.length;
      if (size < chunkBytes) return callback();
      const all = Buffer.concat(buffered);
      buffered = [];
      size = 0;
      const flush = async () => {
        for (let i = 0; i + chunkBytes <= all.length; i += chunkBytes) await store(all.subarray(i, i + chunkBytes));
        const rest = all.length % chunkBytes;
        if (rest > 0) {
          buffered = [all.subarray(all.length - rest)];
          size = rest;
        }
      };
      flush().then(() => callback(), callback);
    },
    final(callback) {
      const rest = Buffer.concat(buffered);
      buffered = [];
      (rest.length > 0 ? store(rest) : Promise.resolve()).then(() => callback(), callback);
    },
  }) as Writable & { bytes: number };
  sink.bytes = 0;
  return sink;
}
