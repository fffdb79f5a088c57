// Detectors triggered by digits, `+` or `(`: payment cards, SSNs, phone numbers, IPv4 (and IPv6 via ip-detectors).
import { isAlnum, isAsciiWordCode, isDigit, WORD_TABLE } from './chars.ts';
import { cardSchemeFits, ssnValid } from './checksums.ts';
import { ipSuffixEnd } from './ip-detectors.ts';
import { digitIdMayApply, scanDigitId } from './national-ids.ts';
import {
  internationalVerdict,
  isPlausibleChinaMobile,
  isPlausibleInternational,
  isPlausibleNanp,
  isPlausibleTrunkNational,
} from './phone-plan.ts';
import { evidence, type ScanState } from './scan-state.ts';
import { type Lexicon, lexicon, polarityAfter, polarityBefore, polarityOfLabel } from './text-features.ts';

const MAX_GROUPS = 12;
const groupStart = new Int32Array(MAX_GROUPS);
const groupEnd = new Int32Array(MAX_GROUPS);
/** Separator kinds before group k (bit 1 space, 2 dash, 4 dot, 8 parenthesis). */
const sepBefore = new Int32Array(MAX_GROUPS);

const SPACE = 1;
const DASH = 2;
const DOT = 4;
const PAREN = 8;
const SLASH = 16;

const CARD_WORDS = [
  'card',
  'credit',
  'debit',
  'visa',
  'mastercard',
  'amex',
  'cc',
  'pan',
  'payment',
  'kreditkarte',
  'carte',
  'tarjeta',
  'cardnumber',
  'ccnumber',
  // Japanese, Chinese, Korean, Russian (CJK words are matched inside longer runs, see polarityBefore)
  'カード',
  '卡号',
  '卡號',
  '银行卡',
  '信用卡',
  '银联',
  '카드',
  'карта',
  'карты',
  'карту',
];
const SSN_WORDS = ['ssn', 'social', 'security', 'tax_id', 'taxid', 'tin', 'ss#', 'ssa', 'socialsecuritynumber', 'itin'];
const PHONE_WORDS = [
  'phone',
  'tel',
  'telephone',
  'mobile',
  'cell',
  'call',
  'called',
  'fax',
  'contact',
  'whatsapp',
  'sms',
  'text',
  'reach',
  'dial',
  'ph',
  'mob',
  'telefon',
  'telefono',
  'teléfono',
  'téléphone',
  'tél',
  'handy',
  'portable',
  'móvil',
  'movil',
  'celular',
  'numero',
  'número',
  'numéro',
  'rufnummer',
  'hotline',
  'phone_number',
  'phonenumber',
  'mobilenumber',
  'cellphone',
  'telemóvel',
  'telemovel',
  'móvil',
  'mobil',
  'mobiel',
  'tel.',
  'nummer',
  'number',
  'numero',
  'line',
  'direct',
  'llámenos',
  'llamenos',
  'llamar',
  'llame',
  'appelez',
  'appeler',
  'rappeler',
  'anrufen',
  'erreichen',
  'erreichbar',
  'ligue',
  'liga',
  'contacto',
  'contactos',
  'kontakt',
  'telefoonnummer',
  'bellen',
  '电话',
  '電話',
  '手机',
  '手機',
  '致电',
  '来电',
  '联系',
  '联络',
  '聯絡',
  '携帯',
  '連絡',
  '전화',
  '연락처',
  '휴대폰',
  '핸드폰',
  'телефон',
  'тел',
  'номер',
  'звоните',
  'позвоните',
];
const NUMBER_NEGATIVE_WORDS = [
  'order',
  'invoice',
  'tracking',
  'ticket',
  'sku',
  'ref',
  'reference',
  'id',
  'account',
  'acct',
  'iban',
  'total',
  'amount',
  'price',
  'version',
  'build',
  'item',
  'case',
  'serial',
  'imei',
  'isbn',
  'routing',
  'aba',
  'po',
  'zip',
  'postcode',
  'ext',
  'extension',
  'arn',
  'confirmation',
  'booking',
  'pnr',
  'transaction',
  'txn',
  'job',
  'pid',
  'timestamp',
  'customer',
  'shipment',
  'shipping',
  'parcel',
  'package',
  'delivery',
  'awb',
  'consignment',
  'orderid',
  'ordernumber',
  'invoiceid',
  'ticketid',
  'receipt',
  'sku',
  'part',
  'model',
  'suivi',
  'sendungsnummer',
  'seguimiento',
  'rastreio',
  'referência',
  'referencia',
  'référence',
  'reference',
  'entidade',
  'pedido',
  'commande',
  'bestellung',
  'bestellnummer',
  'factura',
  'facture',
  'rechnung',
  'fatura',
  'kundennummer',
  'auftrag',
  'vat',
  'nif',
  'nipc',
  'siret',
  'siren',
  'ust',
  'ts',
  'epoch',
  // Employer, provider and company ids written beside phone and fax numbers (EIN 123456789, NPI, DUNS)
  'ein',
  'fein',
  'npi',
  'duns',
  'naics',
  'upin',
  'dea',
  'mrn',
  '订单',
  '訂單',
  '注文',
  '주문',
  '单号',
  '运单',
  '快递',
  '発票',
  '发票',
  '發票',
  '請求書',
  '版本',
  'バージョン',
  'заказ',
  'заказа',
];
const IP_WORDS = [
  'ip',
  'ipv4',
  'ipv6',
  'ip_address',
  'address',
  'addr',
  'host',
  'hostname',
  'server',
  'from',
  'client',
  'remote',
  'src',
  'dst',
  'source',
  'gateway',
  'dns',
  'proxy',
  'connect',
  'connection',
  'ssh',
  'ping',
  'vps',
  'peer',
  'subnet',
  'bind',
  'listen',
  'origin',
  'forwarded',
  'nameserver',
  'endpoint',
  'inet',
  'サーバー',
  'サーバ',
  'ホスト',
  'アドレス',
  '服务器',
  '伺服器',
  '主机',
  '主機',
  '地址',
  '서버',
  '주소',
  'адрес',
  'сервер',
  'хост',
];
const VERSION_WORDS = [
  'version',
  'ver',
  'build',
  'release',
  'released',
  'kernel',
  'firmware',
  'update',
  'upgrade',
  'patch',
  'rev',
  'revision',
  'sdk',
  'semver',
  'tag',
  'changelog',
  'app_version',
  'oid',
  'assemblyversion',
  'baseline',
  'upgraded',
  'upgrading',
  'downgrade',
  'downgraded',
  'bump',
  'bumped',
  'pinned',
  'requires',
  'dependency',
  'hotfix',
  'beta',
  'alpha',
  'rc',
  'lts',
  'ver.',
  'fileversion',
  'productversion',
  // CI and release talk: "CI green on 8.9.76.86", "nightly 4.12.30.7"
  'ci',
  'pipeline',
  'nightly',
  'tagged',
  'shipped',
  'artifact',
  'snapshot',
  'milestone',
  'バージョン',
  '版本',
  '버전',
  'версия',
  'версии',
];
/** Words before legal and document section numbers (Section 18.4.9.4, clause 3.1.2.4, Art. 5.1.2.1). */
const DOCUMENT_WORDS = [
  'section',
  'sections',
  'sec',
  'subsection',
  'clause',
  'clauses',
  'subclause',
  'article',
  'articles',
  'art',
  'paragraph',
  'paragraphs',
  'chapter',
  'appendix',
  'annex',
  'exhibit',
  'item',
  'step',
  'figure',
  'fig',
  'heading',
  'abschnitt',
  'absatz',
  'artikel',
  'ziffer',
  'kapitel',
  'artículo',
  'articulo',
  'apartado',
  'cláusula',
  'clausula',
  'sección',
  'seccion',
  'capítulo',
  'alinéa',
  'paragraphe',
  'chapitre',
  'artigo',
  'seção',
  'secção',
  'articolo',
  'sezione',
  'capitolo',
  'hoofdstuk',
  '条款',
  '章节',
  'セクション',
  '조항',
  'статья',
  'пункт',
  'раздел',
];

const CARD_LEX = lexicon(CARD_WORDS, NUMBER_NEGATIVE_WORDS);
const SSN_LEX = lexicon(SSN_WORDS, NUMBER_NEGATIVE_WORDS);
/**
 * Labels of numbers written next to phone numbers that are not dialled: conference PINs and passcodes, provider,
 * tax and insurance ids on "Fax:" lines.
 */
const NOT_DIALLED_WORDS = ['pin', 'pins', 'passcode', 'pincode', 'npi', 'ein', 'dea', 'upin', 'mrn'];
const PHONE_LEX = lexicon(PHONE_WORDS, [
  ...NUMBER_NEGATIVE_WORDS,
  ...NOT_DIALLED_WORDS,
  'code',
  'conference',
  'meeting',
  'participant',
  'attendee',
  'member',
  'policy',
  'claim',
  'license',
  'licence',
  'medicare',
  'medicaid',
]);
const NOT_DIALLED_LEX = lexicon(PHONE_WORDS, NOT_DIALLED_WORDS);
const IP_LEX = lexicon(IP_WORDS, [...VERSION_WORDS, ...DOCUMENT_WORDS]);
const VERSION_AFTER_LEX = lexicon(
  [],
  [
    'kernel',
    'update',
    'upgrade',
    'release',
    'build',
    'version',
    'patch',
    'firmware',
    'changelog',
    'hotfix',
    'beta',
    'rc',
    'lts',
    'sdk',
    'runtime',
    // "… 12.4.1.3 hereof": a contract's own sections
    'hereof',
    'herein',
    'hereunder',
    'hereto',
    'thereof',
    'thereunder',
  ],
);

/**
 * Context for a number-like match: words in the 40 characters before it on its line, else its CSV or markdown
 * column header, else — when it opens its line after at most a short label such as "speaker_1:" or "A:" — the
 * end of the line before (a question and its answer).
 */
function numberContext(st: ScanState, start: number, lex: Lexicon): number {
  const t = st.text;
  const near = polarityBefore(t, start, 40, lex);
  if (near !== 0) return near;
  const header = st.columnHeaderAt(start);
  if (header !== undefined) return polarityOfLabel(header, lex);
  let lineStart = start;
  while (lineStart > 0 && start - lineStart <= 16 && t.charCodeAt(lineStart - 1) !== 10) lineStart--;
  if (lineStart > 0 && t.charCodeAt(lineStart - 1) === 10) return polarityBefore(t, lineStart - 1, 60, lex);
  return 0;
}

/** "T 020 7946 0018", "M 0176 70837005", "F …": the one-letter labels of business cards and e-mail signatures. */
function oneLetterPhoneLabel(t: string, start: number): boolean {
  if (start < 2 || t.charCodeAt(start - 1) !== 32) return false;
  const c = t.charCodeAt(start - 2);
  if (c !== 84 && c !== 77 && c !== 70 && c !== 80) return false;
  return start < 3 || WORD_TABLE[t.charCodeAt(start - 3)] === 0;
}

/**
 * Scans a run of digit groups starting at `start` (a digit, `+` or `(`) and emits at most one candidate for it.
 * Returns the end of the run (the scanner resumes there), or -1 when the run is not a number of interest.
 */
export function scanNumberRun(st: ScanState, start: number, limit = st.n): number {
  const t = st.text;
  const n = limit;
  let j = start;
  let hasPlus = false;
  let openParen = false;
  if (t.charCodeAt(j) === 43) {
    hasPlus = true;
    j++;
  }
  if (t.charCodeAt(j) === 40) {
    openParen = true;
    j++;
  }
  if (j >= n || !isDigit(t.charCodeAt(j))) return -1;
  // "…9431,,323316129#": digits after the pause commas of a dial string, closed by `#`, are a PIN keyed in.
  if (start >= 2 && t.charCodeAt(start - 1) === 44 && isDialStringPause(t, start)) {
    let k = start;
    while (k < n && isDigit(t.charCodeAt(k))) k++;
    if (t.charCodeAt(k) === 35) return k + 1;
  }
  let groups = 0;
  let digits = 0;
  let sepUnion = 0;
  let sepFirst = -1;
  let sepUniform = true;
  for (;;) {
    const g0 = j;
    while (j < n && isDigit(t.charCodeAt(j))) j++;
    if (groups < MAX_GROUPS) {
      groupStart[groups] = g0;
      groupEnd[groups] = j;
    }
    groups++;
    digits += j - g0;
    if (groups >= MAX_GROUPS || digits > 24) break;
    let k = j;
    let sep = 0;
    let count = 0;
    let spaces = 0;
    while (k < n && count < 3) {
      const c = t.charCodeAt(k);
      if (c === 32) {
        sep |= SPACE;
        spaces++;
      } else if (c === 45) sep |= DASH;
      else if (c === 46) sep |= DOT;
      else if (c === 47) sep |= SLASH;
      else if (c === 40 || c === 41) sep |= PAREN;
      else break;
      k++;
      count++;
    }
    if (count === 0 || k >= n || !isDigit(t.charCodeAt(k)) || spaces > 1) break;
    if (sep & DOT && count > 1) break;
    // Dotted groups end at any other separator: "10.0.0.1 10.0.0.2" are two addresses, not one number.
    if (sepUnion & DOT && sep !== DOT) break;
    if (sep & SLASH && (count > 1 || groups > 1)) break;
    if (count > 1 && !(sep & PAREN) && sep !== (SPACE | DASH)) break;
    sepBefore[groups] = sep;
    sepUnion |= sep;
    if (sepFirst < 0) sepFirst = sep;
    else if (sep !== sepFirst) sepUniform = false;
    j = k;
  }
  const end = j;
  if (groups >= MAX_GROUPS || digits > 24) {
    // Several cards on one line (4012888888881881 4012-8888-8888-1881 …): a leading card is taken on its own and
    // the walk resumes after it.
    const card = leadingCard(st, start, hasPlus || openParen);
    return card > 0 ? card : skipRun(st, end);
  }
  // Right boundary: part of an identifier (123abc), an e-mail local part (123@x) or a longer dotted run. A
  // non-ASCII letter ends the number (`4686 3123 6065 5932で`).
  const after = end < n ? t.charCodeAt(end) : 32;
  // 192.168.2.1@eth0: an address on an interface, not an e-mail's local part.
  const onInterface =
    after === 64 && sepUnion === DOT && groups === 4 && /^@[a-z]{2,6}\d{0,3}\b/.test(t.slice(end, end + 12));
  if (isAsciiWordCode(after) || (after === 64 && !onInterface)) return skipRun(st, end);
  const afterColonDigit = after === 58 && end + 1 < n && isDigit(t.charCodeAt(end + 1));

  if (!hasPlus && !openParen && sepUnion === DOT) {
    if (groups === 4) return scanIpv4(st, start, end);
    // 078.05.1123: an SSN written with dots.
    if (groups === 3 && groupLen(0) === 3 && groupLen(1) === 2 && groupLen(2) === 4 && !afterColonDigit) {
      return scanSsn(st, start, end, groups, sepUnion, sepUniform);
    }
    if (groups === 3 && groupLen(0) === 3 && groupLen(1) === 3 && groupLen(2) === 4 && !afterColonDigit) {
      return scanPhone(st, start, end, groups, digits, false);
    }
    // 04.50.36.39.15: French and Belgian numbers are written in dotted pairs.
    if (groups >= 5 && digits >= 9 && digits <= 12 && !afterColonDigit) {
      return scanPhone(st, start, end, groups, digits, false);
    }
    return end; // versions, decimals, dotted dates: nothing to report
  }
  // "(10.0.0.1)": the parenthesis wraps an address, it is not an area code.
  if (openParen && !hasPlus && sepUnion === DOT) return scanNumberRun(st, start + 1);
  if (afterColonDigit) return end; // times (12:30:45) and host:port pairs that are not IPv4
  if (!hasPlus && !openParen && groups >= 3 && isDateLike(groups, sepUnion)) return end;
  const plainRun = !hasPlus && !openParen && sepUniform && (sepUnion & ~(SPACE | DASH)) === 0;
  // National and account identifiers (8–13 digits) before cards; 14–17-digit account numbers after them.
  if (plainRun && digits >= 8 && digits <= 13 && digitIdAt(st, start, end, groups, digits)) return end;
  if (plainRun && digits >= 13 && digits <= 19) {
    const r = scanCard(st, start, end, groups, digits);
    if (r >= 0) return r;
  }
  if (plainRun && digits >= 14 && digits <= 17 && digitIdAt(st, start, end, groups, digits)) return end;
  if (!hasPlus && !openParen && digits === 9) return scanSsn(st, start, end, groups, sepUnion, sepUniform);
  const found = st.out.length;
  if (digits >= 7 && digits <= 15) scanPhone(st, start, end, groups, digits, hasPlus);
  // "078-051121 07805-1121": numbers written side by side with blanks between and dashes inside are read one by
  // one (the first here; the walk resumes at the blank for the rest).
  if (st.out.length === found && !hasPlus && !openParen && digits >= 16 && sepUnion === (SPACE | DASH)) {
    let g = 1;
    while (g < Math.min(groups, MAX_GROUPS) && sepBefore[g] !== SPACE) g++;
    if (g > 1 && g < Math.min(groups, MAX_GROUPS)) {
      const first = groupEnd[g - 1];
      scanNumberRun(st, start, first);
      return first;
    }
  }
  if (st.out.length === found && (hasPlus || openParen) && groups >= 3) {
    // "+1 (615) 826-9431 323 316 129#": a PIN written straight after the number is not part of it.
    const g = dialledPrefix(st, groups, hasPlus);
    if (g > 0) scanPhone(st, start, groupEnd[g - 1], g, prefixDigits(g), hasPlus);
  }
  return end;
}

function isDialStringPause(t: string, start: number): boolean {
  let k = start - 1;
  while (k > 0 && start - k < 6 && t.charCodeAt(k - 1) === 44) k--;
  return k > 0 && isDigit(t.charCodeAt(k - 1));
}

function prefixDigits(g: number): number {
  let d = 0;
  for (let k = 0; k < g; k++) d += groupLen(k);
  return d;
}

/**
 * For a run that opens like a phone number (`+CC`, `(area)`) but is not one as a whole (too long, or its digits
 * fit no numbering plan): the longest prefix of its groups that is a phone number, or 0.
 */
function dialledPrefix(st: ScanState, groups: number, hasPlus: boolean): number {
  if (hasPlus) {
    for (let g = groups - 1; g >= 2; g--) {
      const d = prefixDigits(g);
      if (d < 8 || d > 15) continue;
      if (internationalVerdict(digitsOf(st, g, true)) > 0) return g;
    }
    return 0;
  }
  // (615) 826-9431 followed by more groups
  if (groups > 3 && groupLen(0) === 3 && groupLen(1) === 3 && groupLen(2) === 4) {
    return isPlausibleNanp(digitsOf(st, 3, false)) ? 3 : 0;
  }
  return 0;
}

/** Luhn over the digits of the run's groups, right to left, without joining them. */
function luhnGroups(t: string, groups: number): boolean {
  let sum = 0;
  let double = false;
  for (let g = groups - 1; g >= 0; g--) {
    for (let i = groupEnd[g] - 1; i >= groupStart[g]; i--) {
      let d = t.charCodeAt(i) - 48;
      if (double) {
        d *= 2;
        if (d > 9) d -= 9;
      }
      sum += d;
      double = !double;
    }
  }
  return sum % 10 === 0;
}

function groupLen(k: number): number {
  return groupEnd[k] - groupStart[k];
}

/** The decimal value of group k (its digits read in place, no slice). */
function groupValue(t: string, k: number): number {
  let v = 0;
  for (let i = groupStart[k]; i < groupEnd[k]; i++) v = v * 10 + t.charCodeAt(i) - 48;
  return v;
}

function skipRun(st: ScanState, end: number): number {
  // Continue after the identifier the run belongs to.
  let j = end;
  while (j < st.n && isAsciiWordCode(st.text.charCodeAt(j))) j++;
  return j;
}

/** A national, tax or account identifier in the run just read (see national-ids.ts), reported when found. */
function digitIdAt(st: ScanState, start: number, end: number, groups: number, digits: number): boolean {
  return digitIdMayApply(st, start, end, digits) && scanDigitId(st, start, end, digitsOf(st, groups, false));
}

function digitsOf(st: ScanState, groups: number, skipTrunkGroup: boolean): string {
  let d = '';
  for (let k = 0; k < groups; k++) {
    // "+44 (0)20 …": the (0) trunk digit is not dialled internationally.
    if (
      skipTrunkGroup &&
      k > 0 &&
      groupLen(k) === 1 &&
      st.text.charCodeAt(groupStart[k]) === 48 &&
      sepBefore[k] & PAREN
    ) {
      continue;
    }
    d += st.text.slice(groupStart[k], groupEnd[k]);
  }
  return d;
}

function isDateLike(groups: number, sepUnion: number): boolean {
  if (sepUnion & DOT && sepUnion & DASH) return false;
  const a = groupLen(0);
  const b = groupLen(1);
  const c = groupLen(2);
  if (sepBefore[1] !== sepBefore[2] || sepBefore[1] === SPACE || sepBefore[1] & PAREN) return false;
  if (groups > 3 && sepBefore[3] !== SPACE) return false;
  return (a === 4 && b <= 2 && c <= 2) || (a <= 2 && b <= 2 && (c === 4 || c === 2));
}

function scanIpv4(st: ScanState, start: number, end: number): number {
  const t = st.text;
  for (let k = 0; k < 4; k++) {
    const len = groupLen(k);
    if (len > 3) return end;
    if (len > 1 && t.charCodeAt(groupStart[k]) === 48) return end;
    if (groupValue(t, k) > 255) return end;
  }
  if (!st.sel.ip) return end;
  const value = t.slice(start, end);
  if (value.charCodeAt(0) === 48 && value !== '0.0.0.0') return end;
  // Version pins: foo==1.2.3.4, pkg>=1.2.3.4, lib~=1.2.3.4 (user@1.2.3.4 is an ssh target, so @ is no sign).
  const p1 = start > 0 ? t.charCodeAt(start - 1) : 0;
  const p2 = start > 1 ? t.charCodeAt(start - 2) : 0;
  if (p1 === 61 && (p2 === 61 || p2 === 126 || p2 === 60 || p2 === 62 || p2 === 33)) return end;
  const ctx = isOutlineNumber(st, start, end) ? -1 : ipContext(st, start, end);
  // 1.2.3.4-style values with small leading parts are usually versions and builds, and values whose every part is
  // small (18.4.9.4, 12.4.1.3) section numbers: only words such as "ip", "host" or "from" make them addresses.
  // 10.x.y.z is the private range, where small parts are common, so it keeps its full weight.
  const g0 = groupValue(t, 0);
  const g1 = groupValue(t, 1);
  const g2 = groupValue(t, 2);
  const g3 = groupValue(t, 3);
  const versionShaped =
    value !== '0.0.0.0' &&
    ((groupLen(0) === 1 && g1 <= 20 && g2 <= 40) || (g0 <= 30 && g0 !== 10 && g1 <= 20 && g2 <= 20 && g3 <= 20));
  // A prefix length (10.0.0.0/8) belongs to the address.
  const full = ipSuffixEnd(t, end, 32, false);
  st.emit(
    'IP_ADDRESS',
    start,
    full,
    evidence({ valid: true, context: ctx, strength: 0.8, ambiguity: versionShaped ? 0.4 : 0 }),
  );
  return full;
}

/**
 * Context of an IP-like match: words before it (or its CSV header), overridden by version words right after it
 * ("… 4.1.2.9 kernel update"); a section sign before it (§ 4.2.1.3) makes it a section number.
 */
export function ipContext(st: ScanState, start: number, end: number): number {
  const t = st.text;
  if (polarityAfter(t, end, 16, VERSION_AFTER_LEX) < 0) return -1;
  let k = start;
  while (k > 0 && start - k < 3 && t.charCodeAt(k - 1) === 32) k--;
  if (k > 0 && (t.charCodeAt(k - 1) === 0xa7 || t.charCodeAt(k - 1) === 0xb6)) return -1;
  return numberContext(st, start, IP_LEX);
}

/**
 * True for the number of an outline heading: at the start of its line (after blanks or list and heading marks),
 * every part below 100, and followed by a capitalized word ("12.4.1.3 Termination", "4.2.1.3. Scope") that is
 * not an address word ("10.0.0.1 Gateway").
 */
function isOutlineNumber(st: ScanState, start: number, end: number): boolean {
  const t = st.text;
  for (let k = 0; k < 4; k++) if (groupLen(k) > 2) return false;
  let k = start;
  while (k > 0 && start - k < 8) {
    const c = t.charCodeAt(k - 1);
    if (c === 32 || c === 9 || c === 35 || c === 42 || c === 45 || c === 62) k--;
    else break;
  }
  if (k > 0 && t.charCodeAt(k - 1) !== 10) return false;
  let a = end;
  if (t.charCodeAt(a) === 46) a++;
  if (t.charCodeAt(a) !== 32) return false;
  const c1 = t.charCodeAt(a + 1);
  const c2 = t.charCodeAt(a + 2);
  if (!(c1 >= 65 && c1 <= 90 && c2 >= 97 && c2 <= 122)) return false;
  return polarityAfter(t, end, 24, IP_LEX) <= 0;
}

/**
 * The first groups of an over-long run that make a card by themselves (13-19 digits, one kind of separator,
 * scheme and Luhn): emits it and returns its end, or -1.
 */
function leadingCard(st: ScanState, start: number, prefixed: boolean): number {
  if (prefixed || !st.sel.card) return -1;
  let digits = 0;
  for (let g = 0; g < MAX_GROUPS - 1; g++) {
    if (g > 0 && (sepBefore[g] !== sepBefore[1] || (sepBefore[g] & ~(SPACE | DASH)) !== 0)) return -1;
    digits += groupLen(g);
    if (digits > 19) return -1;
    if (digits >= 13 && luhnGroups(st.text, g + 1)) {
      const r = scanCard(st, start, groupEnd[g], g + 1, digits);
      if (r > 0 && st.out.length > 0 && st.out[st.out.length - 1].end === groupEnd[g]) return r;
    }
  }
  return -1;
}

function scanCard(st: ScanState, start: number, end: number, groups: number, digitCount: number): number {
  if (groups > 1) {
    for (let k = 0; k < groups - 1; k++) if (groupLen(k) < 3 || groupLen(k) > 6) return -1;
  }
  // Scheme and Luhn are read straight from the text: no digit string is built for the many order numbers.
  const t = st.text;
  const s0 = groupStart[0];
  const prefix = groupLen(0) >= 4 ? t.slice(s0, s0 + 4) : digitsOf(st, Math.min(groups, 2), false).slice(0, 4);
  if (!cardSchemeFits(prefix, digitCount)) return -1;
  if (!st.sel.card) return end;
  const valid = luhnGroups(t, groups);
  // UATP numbers (1…, 15 digits) share their shape with many ids: only a valid check digit makes one a card.
  if (!valid && (t.charCodeAt(s0) === 49 || (digitCount !== 15 && digitCount !== 16))) return end;
  const grouped = groups === 1 || (groups === 4 && groupLen(0) === 4) || (groups === 3 && groupLen(1) === 6);
  const ctx = polarityBefore(st.text, start, 40, CARD_LEX);
  st.emit('CREDIT_CARD', start, end, evidence({ valid, context: ctx, strength: grouped ? 1 : 0.7 }));
  return end;
}

function scanSsn(
  st: ScanState,
  start: number,
  end: number,
  groups: number,
  sepUnion: number,
  uniform: boolean,
): number {
  const t = st.text;
  let area: number;
  let group: number;
  let serial: number;
  let bare = false;
  let weak = false;
  if (
    groups === 3 &&
    uniform &&
    (sepUnion === DASH || sepUnion === SPACE || sepUnion === DOT) &&
    groupLen(0) === 3 &&
    groupLen(1) === 2
  ) {
    area = Number(t.slice(groupStart[0], groupEnd[0]));
    group = Number(t.slice(groupStart[1], groupEnd[1]));
    serial = Number(t.slice(groupStart[2], groupEnd[2]));
    weak = sepUnion === DOT;
  } else if (groups === 2 && sepUnion === DASH && groupLen(0) === 3 && groupLen(1) === 6) {
    // 078-051121: area, then group and serial run together.
    const rest = t.slice(groupStart[1], groupEnd[1]);
    area = Number(t.slice(groupStart[0], groupEnd[0]));
    group = Number(rest.slice(0, 2));
    serial = Number(rest.slice(2));
    weak = true;
  } else if (groups === 1) {
    // Nine bare digits are an SSN only when the words around them say so; "my number / teléfono …" makes them a phone.
    if (numberContext(st, start, SSN_LEX) <= 0 && numberContext(st, start, PHONE_LEX) > 0) {
      return scanPhone(st, start, end, groups, 9, false);
    }
    const s = t.slice(start, end);
    area = Number(s.slice(0, 3));
    group = Number(s.slice(3, 5));
    serial = Number(s.slice(5));
    bare = true;
  } else return scanPhone(st, start, end, groups, 9, false);
  if (!st.sel.ssn) return end;
  const valid = ssnValid(area, group, serial);
  const spaced = sepUnion === SPACE;
  // A dashed 3-2-4 number that breaks the issuing rules is still reported to the scorer, which drops it.
  if (!valid && (bare || spaced || weak)) return end;
  const ctx = numberContext(st, start, SSN_LEX);
  // Without any context a valid bare number is still reported, at low confidence (masked, never blocked).
  if (bare && ctx < 0) return end;
  const ambiguity = bare ? 0.3 : weak ? 0.15 : spaced ? 0.05 : 0;
  st.emit('US_SSN', start, end, evidence({ valid, context: ctx, strength: bare ? 0.6 : 1, ambiguity }));
  return end;
}

function scanPhone(
  st: ScanState,
  start: number,
  end: number,
  groups: number,
  digitCount: number,
  hasPlus: boolean,
): number {
  if (!st.sel.phone) return end;
  let plausible = false;
  let ambiguity = 0;
  let strength = 0.7;
  let trunk = false;
  let trunkBare = false;
  if (hasPlus) {
    if (digitCount < 8) return end;
    const verdict = internationalVerdict(digitsOf(st, groups, true));
    if (verdict === 0) return end;
    plausible = true;
    // A number whose length fits its calling code but whose leading digits match no numbering plan (an
    // unassigned area code) is still written as a phone number: keep it, with less weight.
    ambiguity = verdict === 2 ? 0 : 0.05;
    strength = groups > 1 ? 1 : 0.8;
  } else {
    const d = digitsOf(st, groups, false);
    if (d.charCodeAt(0) === 48 && d.charCodeAt(1) === 48 && d.length >= 10) {
      plausible = isPlausibleInternational(d.slice(2));
      ambiguity = 0.1;
    } else if (isPlausibleNanp(d) && nanpShape(groups)) {
      plausible = true;
      if (groups === 1) ambiguity = 0.3;
      strength = groups === 1 ? 0.5 : 1;
    } else if (groups === 3 && groupLen(0) === 3 && groupLen(1) === 4 && isPlausibleChinaMobile(d)) {
      // 139 4018 4283: Chinese mobiles are written 3-4-4.
      plausible = true;
      strength = 1;
    } else if (d.charCodeAt(0) === 48 && d.length >= 9 && d.length <= 12 && isPlausibleTrunkNational(d)) {
      trunk = true;
      trunkBare = groups === 1 && d.length >= 10 && d.length <= 11;
      // Three or four groups of exactly four digits are how tracking and account numbers are written.
      if (groups >= 3 && groupLen(0) === 4 && groupLen(1) === 4 && groupLen(2) === 4) ambiguity = 0.4;
      else ambiguity = d.length < 10 ? 0.3 : groups === 1 ? 0.25 : 0.1;
      plausible = true;
      strength = groups === 1 ? 0.5 : 0.9;
    }
  }
  let ctx = oneLetterPhoneLabel(st.text, start) ? 1 : numberContext(st, start, PHONE_LEX);
  if (!plausible) {
    // National formats without a trunk prefix (ES 915 10 61 47, PT 217 989 184, BR (81) 98714-4997) look like any
    // other number: only the words around them make them a phone number.
    if (ctx <= 0 || digitCount < 8 || digitCount > 12 || hasPlus) return end;
    ambiguity = 0;
    strength = 0.6;
  }
  // A single run of digits next to words that say it is something else is not a phone number; with no words
  // around it, it is reported at low confidence. A short trunk-prefixed number needs words that say "phone".
  if (!hasPlus && ((ctx < 0 && groups === 1 && !trunkBare) || (ctx <= 0 && trunk && digitCount < 10))) return end;
  // "PIN 615 826 9431", "NPI 212 555 0187": however it is grouped, a number labelled as a PIN or an id is not dialled.
  if (ctx < 0 && !hasPlus && polarityBefore(st.text, start, 40, NOT_DIALLED_LEX) < 0) return end;
  // "+CC …", "(212) 555-0100", "06-30839225" are written only for phone numbers: words such as "order" or
  // "ticket" nearby do not make them something else. Bare and oddly grouped numbers do heed those words.
  if (ctx < 0 && (hasPlus || (groups > 1 && ambiguity <= 0.1))) ctx = 0;
  // A bare or trunk-prefixed number next to "order" or "ref" is that number, not a phone: drop it outright.
  if (ctx < 0 && ambiguity > 0) return end;
  st.emit('PHONE_NUMBER', start, end, evidence({ valid: true, context: ctx, strength, ambiguity }));
  return end;
}

function nanpShape(groups: number): boolean {
  // 2125550100, 212-555-0100, (212) 555-0100, 1-212-555-0100
  if (groups === 1) return true;
  if (groups === 3) return groupLen(0) === 3 && groupLen(1) === 3 && groupLen(2) === 4;
  if (groups === 4) return groupLen(0) === 1 && groupLen(1) === 3 && groupLen(2) === 3 && groupLen(3) === 4;
  return false;
}

/**
 * True when position `i` starts a number rather than continuing an identifier, a version or a path (v1.2, SKU-12,
 * /42). A non-ASCII letter before it is a separator (`卡号6212…`, `電話090…`).
 */
export function numberBoundaryBefore(text: string, i: number): boolean {
  if (i === 0) return true;
  const p = text.charCodeAt(i - 1);
  if (isAsciiWordCode(p)) return false;
  if (p === 46 || p === 45 || p === 47 || p === 35) {
    // "#123" ticket numbers, "x.5", "SKU-12", "/orders/42"
    if (p === 35) return false;
    return i < 2 || !isAlnum(text.charCodeAt(i - 2));
  }
  return true;
}
