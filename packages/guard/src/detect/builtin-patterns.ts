// The built-in detector catalog: what is seeded into the pattern table on first start and shown by GET /patterns.
import type { PatternSpec } from './types.ts';

/** Categories of the built-in detectors. */
export type BuiltinCategory = 'PII' | 'SECRET' | 'INJECTION';

/** One row of the built-in catalog. */
export interface BuiltinPattern {
  /** Detection type and pattern name. */
  readonly name: string;
  readonly category: BuiltinCategory;
  readonly description: string;
  /** The regex stage's starting risk for a well-formed match, before validation, context and placeholder checks. */
  readonly baseScore: number;
  /**
   * A Go/RE2 approximation of the native detector (it compiles with re2js). While a stored pattern keeps this
   * exact text, the native detector runs; once edited, the stored regex runs instead, as a user pattern.
   */
  readonly regex: string;
  /**
   * False for detectors seeded inactive (an operator turns them on): MAC addresses are device data, not personal
   * data, in most deployments; routing numbers name a bank and NPIs are public registry numbers, not people; bank
   * account numbers have no check digit, so only a naming word tells them from customer, order and ticket numbers.
   */
  readonly defaultActive?: boolean;
  /** The catalog release that added it: 1 for the first library; later ones are seeded into existing installs once. */
  readonly since?: number;
}

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const H16 = '[0-9A-Fa-f]{1,4}';

/** Every built-in detector, in catalog order. */
export const BUILTIN_PATTERNS: readonly BuiltinPattern[] = Object.freeze([
  {
    name: 'EMAIL',
    category: 'PII',
    description: 'E-mail address (local part, @, a domain with a top-level domain)',
    baseScore: 0.62,
    regex: '[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}',
  },
  {
    name: 'PHONE_NUMBER',
    category: 'PII',
    description:
      'Phone number in international (+CC, 00CC) or national format, checked against libphonenumber-js numbering plans',
    baseScore: 0.58,
    regex:
      '(?:\\+|\\b00)[1-9][0-9 ().-]{6,20}[0-9]|\\(?\\b[2-9][0-9]{2}\\)?[ .-]?[2-9][0-9]{2}[ .-]?[0-9]{4}\\b|\\b0[1-9][0-9 ().-]{7,14}[0-9]\\b',
  },
  {
    name: 'CREDIT_CARD',
    category: 'PII',
    description: 'Payment card number (13–19 digits, scheme prefix and length, Luhn check digit)',
    baseScore: 0.88,
    regex:
      '\\b(?:4[0-9]{3}|5[0-9]{3}|2[2-7][0-9]{2}|3[0-9]{3}|6[0-9]{3})(?:[ -]?[0-9]{4,6}){2,3}(?:[ -]?[0-9]{1,4})?\\b',
  },
  {
    name: 'US_SSN',
    category: 'PII',
    description: 'US Social Security number (area 001–899 except 666, group 01–99, serial 0001–9999)',
    baseScore: 0.86,
    regex:
      '\\b(?:00[1-9]|0[1-9][0-9]|[1-578][0-9]{2}|6[0-57-9][0-9]|66[0-57-9])[- ]?(?:0[1-9]|[1-9][0-9])[- ]?(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})\\b',
  },
  {
    name: 'IBAN',
    category: 'PII',
    description: 'International Bank Account Number (country length and mod-97 checksum)',
    baseScore: 0.86,
    regex: '\\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\\b',
  },
  {
    name: 'IP_ADDRESS',
    category: 'PII',
    description: 'IPv4 or IPv6 address (version numbers and build ids are told apart by context)',
    baseScore: 0.55,
    regex: `\\b(?:${OCTET}\\.){3}${OCTET}\\b|(?:${H16}:){7}${H16}|(?:${H16}:){1,7}:(?:${H16}(?::${H16}){0,6})?`,
  },
  {
    name: 'URL',
    category: 'PII',
    since: 2,
    description:
      'Web or service address: scheme://… (http, https, ftp, ws, ssh, git, database schemes), www.… or a host name under a common top-level domain; credentials inside it are reported as GENERIC_PASSWORD, and a URL that holds another detection yields to it',
    baseScore: 0.5,
    regex:
      '(?i)\\b(?:https?|ftps?|sftp|wss?|ssh|git|mongodb(?:\\+srv)?|postgres(?:ql)?|mysql|rediss?|amqps?)://[^\\s"\'<>`{}|\\\\^]{3,}|\\bwww\\.[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)+[^\\s"\'<>]*',
  },
  {
    name: 'MAC_ADDRESS',
    category: 'PII',
    description:
      'MAC (hardware) address: six hex pairs joined by : or -, or three dotted hex quads (Cisco); broadcast and all-zero addresses are placeholders',
    baseScore: 0.5,
    defaultActive: false,
    since: 2,
    regex:
      '\\b(?:[0-9A-Fa-f]{2}([:-]))(?:[0-9A-Fa-f]{2}[:-]){4}[0-9A-Fa-f]{2}\\b|\\b[0-9A-Fa-f]{4}\\.[0-9A-Fa-f]{4}\\.[0-9A-Fa-f]{4}\\b',
  },
  {
    name: 'PERSON',
    category: 'PII',
    description:
      "Person's name in English text (given and family names, with a title), found by the compromise part-of-speech tagger; seeded inactive (about a hundred times slower than the other detectors, and a name has no checksum), mask band only",
    baseScore: 0.6,
    defaultActive: false,
    since: 4,
    regex: '\\b(?:(?:Mrs?|Ms|Miss|Dr|Prof)\\.? )?[A-Z][a-z]+(?: [A-Z]\\.)?(?: [A-Z][a-z]+(?:-[A-Z][a-z]+)?)+\\b',
  },
  {
    name: 'UK_NINO',
    category: 'PII',
    since: 2,
    description:
      'UK National Insurance number (two prefix letters from the allowed set, six digits, suffix A–D); context: NI, national insurance',
    baseScore: 0.8,
    regex: '\\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z][0-9]{6}[A-D]\\b',
  },
  {
    name: 'IN_PAN',
    category: 'PII',
    since: 2,
    description:
      'Indian Permanent Account Number (five letters, the fourth the holder type, four digits, a letter); context: PAN, income tax',
    baseScore: 0.78,
    regex: '\\b[A-Z]{3}[ABCFGHLJPTK][A-Z][0-9]{4}[A-Z]\\b',
  },
  {
    name: 'IN_AADHAAR',
    category: 'PII',
    since: 2,
    description:
      'Indian Aadhaar number (12 digits, first 2–9, Verhoeff check digit), grouped 4-4-4 or named (aadhaar, UID, आधार)',
    baseScore: 0.84,
    regex: '\\b[2-9][0-9]{3}[ -]?[0-9]{4}[ -]?[0-9]{4}\\b',
  },
  {
    name: 'ES_NIF',
    category: 'PII',
    since: 2,
    description:
      'Spanish DNI/NIF (8 digits and a mod-23 check letter) and NIE (X/Y/Z, 7 digits, check letter); context: DNI, NIF, NIE',
    baseScore: 0.82,
    regex: '\\b(?:[0-9]{8}|[XYZ][0-9]{7})[A-Z]\\b',
  },
  {
    name: 'IT_FISCAL_CODE',
    category: 'PII',
    since: 2,
    description:
      'Italian codice fiscale (16 characters: surname, name, birth date and place, check letter); context: codice fiscale',
    baseScore: 0.84,
    regex: '\\b[A-Z]{6}[0-9LMNPQRSTUV]{2}[ABCDEHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]\\b',
  },
  {
    name: 'SG_NRIC_FIN',
    category: 'PII',
    since: 2,
    description: 'Singapore NRIC or FIN (S/T/F/G/M, 7 digits, weighted check letter); context: NRIC, FIN',
    baseScore: 0.82,
    regex: '\\b[STFGM][0-9]{7}[A-Z]\\b',
  },
  {
    name: 'FI_PERSONAL_ID',
    category: 'PII',
    since: 2,
    description:
      'Finnish henkilötunnus (birth date DDMMYY, century sign, individual number, mod-31 check character); context: henkilötunnus, hetu',
    baseScore: 0.84,
    regex: '\\b[0-3][0-9][01][0-9][0-9]{2}[-+A-FU-Y][0-9]{3}[0-9A-Y]\\b',
  },
  {
    name: 'TR_NATIONAL_ID',
    category: 'PII',
    since: 2,
    description: 'Turkish T.C. kimlik no (11 digits, two check digits), when named (TC, TCKN, kimlik)',
    baseScore: 0.84,
    regex: '\\b[1-9][0-9]{10}\\b',
  },
  {
    name: 'AU_TFN',
    category: 'PII',
    since: 3,
    description:
      'Australian Tax File Number (9 digits, or 8 for older ones, weighted sum divisible by 11), when named (TFN, tax file)',
    baseScore: 0.82,
    regex: '\\b[0-9]{3}[ -]?[0-9]{3}[ -]?[0-9]{2,3}\\b',
  },
  {
    name: 'AU_ABN',
    category: 'PII',
    since: 3,
    description: 'Australian Business Number (11 digits, mod-89 weighted check), when named (ABN, business number)',
    baseScore: 0.8,
    regex: '\\b[0-9]{2}[ -]?[0-9]{3}[ -]?[0-9]{3}[ -]?[0-9]{3}\\b',
  },
  {
    name: 'AU_ACN',
    category: 'PII',
    since: 3,
    description: 'Australian Company Number (9 digits, mod-10 weighted check digit), when named (ACN, company number)',
    baseScore: 0.8,
    regex: '\\b[0-9]{3}[ -]?[0-9]{3}[ -]?[0-9]{3}\\b',
  },
  {
    name: 'AU_MEDICARE',
    category: 'PII',
    since: 3,
    description:
      'Australian Medicare card number (10 digits, first 2–6, weighted check digit, optional IRN), when named (Medicare)',
    baseScore: 0.82,
    regex: '\\b[2-6][0-9]{3}[ -]?[0-9]{5}[ -]?[0-9]{1,2}\\b',
  },
  {
    name: 'KR_RRN',
    category: 'PII',
    since: 3,
    description:
      'Korean resident registration number (YYMMDD-NNNNNNN: birth date, century/sex digit, check digit); numbers since 2020 without a valid check digit only when named (주민등록번호, RRN)',
    baseScore: 0.84,
    regex: '\\b[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])-?[0-9]{7}\\b',
  },
  {
    name: 'US_ITIN',
    category: 'PII',
    since: 3,
    description:
      'US Individual Taxpayer Identification Number (9xx-[50–65, 70–88, 90–92, 94–99]-xxxx); undashed only when named (ITIN, taxpayer)',
    baseScore: 0.84,
    regex: '\\b9[0-9]{2}[- ]?(?:5[0-9]|6[0-5]|7[0-9]|8[0-8]|9[0-24-9])[- ]?[0-9]{4}\\b',
  },
  {
    name: 'US_PASSPORT',
    category: 'PII',
    since: 3,
    description: 'US passport number (9 digits, or a letter and 8 digits), only when named (passport); no check digit',
    baseScore: 0.78,
    regex: '\\b[A-Z]?[0-9]{8,9}\\b',
  },
  {
    name: 'US_DRIVER_LICENSE',
    category: 'PII',
    since: 3,
    description:
      "US driver's licence number (8–9 digits, or a letter and 6–13 digits, as the states issue them), only when named (driver's license, licence, DL); no check digit, so it is masked, not blocked",
    baseScore: 0.76,
    regex: '\\b[A-Z]?[0-9]{6,13}\\b',
  },
  {
    name: 'US_BANK_NUMBER',
    category: 'PII',
    since: 3,
    defaultActive: false,
    description:
      'Bank account number (8–17 digits, not a payment card), only when named (bank, account, acct); no check digit, so it is masked, not blocked',
    baseScore: 0.76,
    regex: '\\b[0-9]{8,17}\\b',
  },
  {
    name: 'ABA_ROUTING_NUMBER',
    category: 'PII',
    since: 3,
    defaultActive: false,
    description:
      'US ABA routing transit number (9 digits, Federal Reserve prefix, 3-7-1 checksum), when named (routing, ABA, RTN)',
    baseScore: 0.78,
    regex: '\\b(?:0[0-9]|1[0-2]|2[1-9]|3[0-2]|6[1-9]|7[0-2]|80)[0-9]{7}\\b',
  },
  {
    name: 'US_MBI',
    category: 'PII',
    since: 3,
    description:
      'US Medicare Beneficiary Identifier (11 positional letters and digits, no S/L/O/I/B/Z, dashes after the 4th and 7th optional); context: MBI, Medicare',
    baseScore: 0.8,
    regex:
      '\\b[1-9][AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9][0-9]-?[AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9][0-9]-?[AC-HJKMNP-RT-Y]{2}[0-9]{2}\\b',
  },
  {
    name: 'US_NPI',
    category: 'PII',
    since: 3,
    defaultActive: false,
    description:
      'US National Provider Identifier (10 digits starting 1 or 2, Luhn check behind the 80840 prefix), when named (NPI, provider)',
    baseScore: 0.78,
    regex: '\\b[12][0-9]{9}\\b',
  },
  {
    name: 'DE_TAX_ID',
    category: 'PII',
    since: 3,
    description:
      'German tax identification number (Steuer-ID: 11 digits, one digit repeated, ISO 7064 MOD 11,10 check digit), when named (Steuer-ID, IdNr, Steueridentifikationsnummer)',
    baseScore: 0.82,
    regex: '\\b[1-9][0-9]{1}[ ]?[0-9]{3}[ ]?[0-9]{3}[ ]?[0-9]{3}\\b',
  },
  {
    name: 'TH_TNIN',
    category: 'PII',
    since: 3,
    description:
      'Thai national id number (13 digits, first 1–8, mod-11 check digit), written 1-2345-67890-12-3 or named (เลขประจำตัวประชาชน, Thai id)',
    baseScore: 0.84,
    regex: '\\b[1-8]-?[0-9]{4}-?[0-9]{5}-?[0-9]{2}-?[0-9]\\b',
  },
  {
    name: 'CRYPTO_WALLET',
    category: 'PII',
    since: 3,
    description:
      'Cryptocurrency wallet address: Bitcoin base58check (1…, 3…), bech32/bech32m (bc1…) with their checksums, Ethereum 0x + 40 hex (EIP-55 checksum when mixed-case; all-lower-case ones are masked, not blocked)',
    baseScore: 0.84,
    regex: '\\b(?:[13][1-9A-HJ-NP-Za-km-z]{25,34}|(?:bc|tb)1[02-9ac-hj-np-z]{39,59}|0x[0-9a-fA-F]{40})\\b',
  },
  {
    name: 'AWS_ACCESS_KEY',
    category: 'SECRET',
    description: 'AWS access key id (AKIA… long-term, ASIA… temporary, ABIA…, ACCA…, A3T…)',
    baseScore: 0.9,
    regex: '\\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\\b',
  },
  {
    name: 'GITHUB_TOKEN',
    category: 'SECRET',
    description:
      'GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_); the embedded CRC32 checksum, when it passes, raises the score',
    baseScore: 0.92,
    regex: '\\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})\\b',
  },
  {
    name: 'OPENAI_API_KEY',
    category: 'SECRET',
    description: 'OpenAI API key (sk-proj-, sk-svcacct-, sk-admin-, legacy sk-…T3BlbkFJ…)',
    baseScore: 0.92,
    regex:
      '\\bsk-(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}|\\bsk-[A-Za-z0-9]{48}\\b',
  },
  {
    name: 'ANTHROPIC_API_KEY',
    category: 'SECRET',
    description: 'Anthropic API key (sk-ant-api03-…, sk-ant-admin01-…)',
    baseScore: 0.92,
    regex: '\\bsk-ant-[a-z]{3,8}[0-9]{2}-[A-Za-z0-9_-]{32,200}',
  },
  {
    name: 'STRIPE_KEY',
    category: 'SECRET',
    description: 'Stripe secret or restricted key (sk_live_, rk_live_, sk_prod_, rk_prod_, sk_test_, rk_test_)',
    baseScore: 0.92,
    regex: '\\b[rs]k_(?:live|test|prod)_[A-Za-z0-9]{16,247}\\b',
  },
  {
    name: 'SLACK_TOKEN',
    category: 'SECRET',
    description:
      'Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-, xoxe.xoxp- configuration tokens, xapp-); bodies without numeric ids are stand-ins',
    baseScore: 0.9,
    regex: '\\b(?:xoxe\\.)?xox[abposre]-[0-9A-Za-z-]{10,250}|\\bxapp-[0-9]-[A-Za-z0-9-]{20,250}',
  },
  {
    name: 'GOOGLE_API_KEY',
    category: 'SECRET',
    description: 'Google API key (AIza…)',
    baseScore: 0.88,
    regex: '\\bAIza[0-9A-Za-z_-]{35}\\b',
  },
  {
    name: 'JWT',
    category: 'SECRET',
    description:
      'JSON Web Token (base64url header.payload.signature; a header that decodes to JSON raises the score, ey….ey….… tokens that do not decode count by structure; a JWT base64-encoded once more, ZXlK…, when it decodes to one)',
    baseScore: 0.86,
    regex:
      '\\beyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]*|\\bey[A-Za-z0-9]{17,}\\.ey[A-Za-z0-9/_+-]{17,}\\.[A-Za-z0-9/_+-]*',
  },
  {
    name: 'PRIVATE_KEY',
    category: 'SECRET',
    description: 'PEM or OpenSSH private key block (-----BEGIN … PRIVATE KEY----- to its END line)',
    baseScore: 0.95,
    regex:
      '-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\\s\\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----',
  },
  {
    name: 'GENERIC_PASSWORD',
    category: 'SECRET',
    description:
      'Password or secret value assigned to a password/secret/token-like key (key=value, key: value, JSON, CLI flags, URL credentials), stated in prose in several languages, or given to tools (.pgpass, net user, --password-stdin); vendor tokens without a type of their own, by the published formats of the vendor catalogue (GitLab, npm, PyPI, 1Password, age, Grafana, Notion, Sourcegraph, Facebook, Adobe, Hugging Face, Databricks, Doppler, Pulumi, Postman, Linear, Shopify, SendGrid, Mailgun, Twilio, HashiCorp Vault, DigitalOcean, Atlassian, Heroku, Dropbox, Twitter/X, Sentry, Discord, Amazon Bedrock, Square, Sonar, New Relic, Brevo, Docker Hub, Fly.io, Tailscale, PlanetScale, Render, Supabase, Groq, xAI, Perplexity, Replicate, JFrog, Clojars, Dynatrace, EasyPost, Flutterwave, NuGet, Google OAuth, Typeform, ReadMe, RubyGems, Shippo, Mapbox, OpenShift, Prefect, Scalingo, 42, Contentful, Netlify, Buildkite, LangSmith, Alibaba Cloud; CRC32 checksums of npm tokens verified); the span is the value',
    baseScore: 0.86,
    regex:
      '(?i)(?:password|passwd|pwd|passcode|passphrase|secret|api_?key|token)["\']?\\s*(?:=|:)\\s*["\']?([^\\s"\',;]{4,})',
  },
  {
    name: 'PROMPT_INJECTION',
    category: 'INJECTION',
    description:
      'Prompt-injection phrases ("ignore all previous instructions", "you are now DAN", "reveal your system prompt") in English, Spanish, French, German, Portuguese, Italian and Dutch',
    baseScore: 0.9,
    regex:
      '(?i)(?:ignore|disregard|forget)\\s+(?:all\\s+)?(?:the\\s+|your\\s+)?(?:previous|prior|above|earlier)\\s+(?:instructions|prompts|rules)|you\\s+are\\s+now\\s+DAN\\b|(?:reveal|show|print)\\s+(?:me\\s+)?(?:your|the)\\s+system\\s+prompt',
  },
] satisfies BuiltinPattern[]);

const BY_NAME = new Map(BUILTIN_PATTERNS.map((p) => [p.name, p]));

/** The built-ins a fresh install runs (defaultActive not false), as pattern specs without overrides. */
export function defaultPatternSpecs(): PatternSpec[] {
  return BUILTIN_PATTERNS.filter((p) => p.defaultActive !== false).map((p) => ({
    name: p.name,
    regex: p.regex,
    category: p.category,
    allowThreshold: null,
    blockThreshold: null,
  }));
}

/** The built-in pattern of that name, or undefined. */
export function builtinPattern(name: string): BuiltinPattern | undefined {
  return BY_NAME.get(name);
}

/**
 * True when the spec is a built-in whose regex nobody changed (surrounding whitespace aside): the native detector
 * runs for it. Any other spec, including a built-in name with an edited regex, runs as a user pattern.
 */
export function isUnmodifiedBuiltin(spec: Pick<PatternSpec, 'name' | 'regex'>): boolean {
  const builtin = BY_NAME.get(spec.name);
  return builtin !== undefined && builtin.regex === spec.regex.trim();
}
