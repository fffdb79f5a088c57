// The vendor secret catalogue: one row of data per published token format, driven by one generic matcher.
//
// A row names the detection type, the vendor, the literal prefix(es) the vendor puts in front of every token, the
// body (an anchored pattern run only where a prefix already matched, so a row costs nothing on text without its
// prefix), an embedded checksum when the format has one, and the words that confirm it when they stand before the
// token. The scanner reaches a row only through SECRET_START (the first two characters of every prefix), so adding
// rows adds no pass over the text. Formats with more structure than a prefix and a body (Slack's numeric ids,
// OpenAI's marker, JWT headers that decode, Stripe's modes) stay in secret-detectors.ts.
//
// Types follow the built-in taxonomy: vendors with a type of their own keep it (AWS_ACCESS_KEY, GITHUB_TOKEN,
// GOOGLE_API_KEY, SLACK_TOKEN, JWT); every other vendor's token is a GENERIC_PASSWORD (a credential, block band).
import { crc32 } from 'node:zlib';
import { bech32Valid } from './crypto-checksums.ts';
import { evidence, type ScanState } from './scan-state.ts';
import { isPlaceholderValue, type Lexicon, lexicon, polarityBefore, shannonEntropy } from './text-features.ts';

/** Embedded checksums a row can verify: a pass raises the score; a failure leaves it neutral (test tokens). */
export type TokenChecksum =
  /** The last 6 characters are the base62 CRC32 of the 30 before them (GitHub's 2021 format, npm's). */
  | 'crc32-base62'
  /** The whole token is a bech32 string (age secret keys). */
  | 'bech32'
  /** The body is base64 of a JWT (header.payload.signature whose header is a JSON object). */
  | 'base64-jwt';

/** One published token format. */
export interface SecretFormat {
  readonly type: string;
  readonly vendor: string;
  /** Literal, case-sensitive prefixes; the body follows the prefix directly. */
  readonly prefixes: readonly string[];
  /** The body after the prefix, anchored (its source is compiled sticky). */
  readonly body: RegExp;
  /** An embedded checksum the matcher verifies. */
  readonly checksum?: TokenChecksum;
  /** True when a failed checksum means the value is not of this format at all (not merely a test token). */
  readonly checksumRequired?: boolean;
  /** Words that confirm the vendor when they stand before the token (same line, 40 characters). */
  readonly keywords?: readonly string[];
  /** Added to the type's base score (a weaker format, a test-mode token). */
  readonly baseAdjust?: number;
  /** Documented example bodies (vendor docs, README samples): reported as placeholders, never as secrets. */
  readonly examples?: readonly string[];
}

/** Every vendor format, grouped by vendor. */
export const SECRET_FORMATS: readonly SecretFormat[] = Object.freeze([
  // Amazon: access key ids (long-term AKIA, temporary ASIA, STS bearer ABIA, context ACCA, older A3T?).
  {
    type: 'AWS_ACCESS_KEY',
    vendor: 'AWS',
    prefixes: ['AKIA', 'ASIA', 'ABIA', 'ACCA'],
    body: /[A-Z0-9]{16}(?![A-Za-z0-9_])/,
    examples: ['IOSFODNN7EXAMPLE'],
  },
  { type: 'AWS_ACCESS_KEY', vendor: 'AWS', prefixes: ['A3T'], body: /[A-Z0-9]{17}(?![A-Za-z0-9_])/ },
  // Google Cloud API keys and OAuth client secrets.
  { type: 'GOOGLE_API_KEY', vendor: 'Google', prefixes: ['AIza'], body: /[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/ },
  { type: 'GENERIC_PASSWORD', vendor: 'Google OAuth', prefixes: ['GOCSPX-'], body: /[A-Za-z0-9_-]{24,400}/ },
  // GitHub: 30 random base62 characters and a 6-character CRC32; older or hand-made ones are longer.
  {
    type: 'GITHUB_TOKEN',
    vendor: 'GitHub',
    prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
    body: /[A-Za-z0-9]{36,255}(?![A-Za-z0-9_])/,
    checksum: 'crc32-base62',
  },
  { type: 'GITHUB_TOKEN', vendor: 'GitHub', prefixes: ['github_pat_'], body: /[A-Za-z0-9_]{50,255}/ },
  // GitLab: personal, pipeline trigger, runner, deploy, feed, incoming mail, OAuth, SCIM, agent tokens.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'GitLab',
    prefixes: ['glpat-', 'glptt-', 'glrt-', 'gldt-', 'glft-', 'glimt-', 'gloas-', 'glsoat-', 'glagent-', 'glcbt-'],
    // Routable tokens carry dotted parts (glpat-….01.…); a sentence's final dot is not one.
    body: /[A-Za-z0-9_-]{20,400}(?:\.[A-Za-z0-9_-]+){0,4}(?![A-Za-z0-9_])/,
  },
  // npm: the same 30 + CRC32 layout as GitHub's.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'npm',
    prefixes: ['npm_'],
    body: /[A-Za-z0-9]{36}(?![A-Za-z0-9_])/,
    checksum: 'crc32-base62',
  },
  // PyPI upload tokens: a macaroon whose serialization starts AgE (base64 of its version byte).
  { type: 'GENERIC_PASSWORD', vendor: 'PyPI', prefixes: ['pypi-AgE'], body: /[A-Za-z0-9_-]{50,4000}/ },
  // 1Password: account secret keys (A3-…) and service-account tokens (ops_ + base64 JSON).
  {
    type: 'GENERIC_PASSWORD',
    vendor: '1Password',
    prefixes: ['A3-'],
    body: /[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}(?![A-Za-z0-9])/,
    keywords: ['1password', 'op', 'secret', 'key'],
  },
  { type: 'GENERIC_PASSWORD', vendor: '1Password', prefixes: ['ops_eyJ'], body: /[A-Za-z0-9+/]{250,8000}={0,3}/ },
  // age file encryption: a bech32 string with the human-readable part AGE-SECRET-KEY-.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'age',
    prefixes: ['AGE-SECRET-KEY-1'],
    body: /[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}(?![A-Za-z0-9])/,
    checksum: 'bech32',
  },
  // Grafana: Cloud access policy tokens (glc_), service-account tokens (glsa_), legacy API keys (base64 {"k":").
  { type: 'GENERIC_PASSWORD', vendor: 'Grafana', prefixes: ['glc_'], body: /[A-Za-z0-9+/]{32,400}={0,2}/ },
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Grafana',
    prefixes: ['glsa_'],
    body: /[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}(?![A-Za-z0-9_])/,
  },
  { type: 'GENERIC_PASSWORD', vendor: 'Grafana', prefixes: ['eyJrIjoi'], body: /[A-Za-z0-9]{50,400}={0,2}/ },
  // Notion integration tokens: ntn_, 11 digits, 35 alphanumerics; older secret_ + 43.
  { type: 'GENERIC_PASSWORD', vendor: 'Notion', prefixes: ['ntn_'], body: /[0-9]{11}[A-Za-z0-9]{35}(?![A-Za-z0-9])/ },
  // Sourcegraph access tokens: sgp_ [instance id _] 40 hex; license keys slk_ 64 hex.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Sourcegraph',
    prefixes: ['sgp_'],
    body: /(?:(?:[A-Fa-f0-9]{16}|local)_)?[A-Fa-f0-9]{40}(?![A-Za-z0-9_])/,
  },
  // Webhook signing secrets (Stripe, Svix and the Standard Webhooks specification): whsec_ and the base64 of 24 to
  // 64 random bytes (Stripe's are 32 alphanumerics).
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Stripe / Standard Webhooks',
    prefixes: ['whsec_'],
    body: /[A-Za-z0-9+/]{32,88}={0,2}(?![A-Za-z0-9+/=_-])/,
  },
  // Facebook / Meta user and page access tokens.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Facebook',
    prefixes: ['EAAB', 'EAAC', 'EAAG', 'EAAM', 'EAAJ', 'EAAI'],
    body: /[A-Za-z0-9]{90,400}(?![A-Za-z0-9])/,
  },
  // Adobe I/O OAuth client secrets.
  { type: 'GENERIC_PASSWORD', vendor: 'Adobe', prefixes: ['p8e-'], body: /[A-Za-z0-9_-]{32}(?![A-Za-z0-9_-])/ },
  // A JWT sent base64-encoded once more (Kubernetes secrets, headers): "eyJ" encodes to "ZXlK".
  {
    type: 'JWT',
    vendor: 'JWT (base64)',
    prefixes: ['ZXlK'],
    body: /[A-Za-z0-9+/]{60,8000}={0,2}/,
    checksum: 'base64-jwt',
    checksumRequired: true,
  },
  // Hugging Face user and organisation tokens.
  { type: 'GENERIC_PASSWORD', vendor: 'Hugging Face', prefixes: ['hf_'], body: /[A-Za-z]{34}(?![A-Za-z0-9_])/ },
  { type: 'GENERIC_PASSWORD', vendor: 'Hugging Face', prefixes: ['api_org_'], body: /[A-Za-z]{34}(?![A-Za-z0-9_])/ },
  // Databricks personal access tokens: dapi + 32 hex, an optional -N.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Databricks',
    prefixes: ['dapi'],
    body: /[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9_])/,
  },
  // Doppler service, CLI, SCIM, audit and personal tokens.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Doppler',
    prefixes: ['dp.pt.', 'dp.st.', 'dp.ct.', 'dp.sa.', 'dp.scim.', 'dp.audit.'],
    body: /(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}(?![A-Za-z0-9])/,
  },
  // Pulumi access tokens.
  { type: 'GENERIC_PASSWORD', vendor: 'Pulumi', prefixes: ['pul-'], body: /[a-f0-9]{40}(?![A-Za-z0-9])/ },
  // Postman API keys.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Postman',
    prefixes: ['PMAK-'],
    body: /[a-f0-9]{24}-[a-f0-9]{34}(?![A-Za-z0-9])/,
  },
  // Linear API keys and OAuth tokens.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Linear',
    prefixes: ['lin_api_', 'lin_oauth_'],
    body: /[A-Za-z0-9]{40}(?![A-Za-z0-9])/,
  },
  // Shopify access tokens (admin, custom app, private app) and shared secrets.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Shopify',
    prefixes: ['shpat_', 'shpca_', 'shppa_', 'shpss_'],
    body: /[a-fA-F0-9]{32}(?![A-Za-z0-9])/,
  },
  // SendGrid API keys: SG. 22 . 43.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'SendGrid',
    prefixes: ['SG.'],
    body: /[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/,
  },
  // Mailgun private API keys and public validation keys.
  { type: 'GENERIC_PASSWORD', vendor: 'Mailgun', prefixes: ['key-', 'pubkey-'], body: /[a-f0-9]{32}(?![A-Za-z0-9])/ },
  // Twilio API key SIDs (SK + 32 hex): an id as much as a key, so it needs a naming word.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Twilio',
    prefixes: ['SK'],
    body: /[a-f0-9]{32}(?![A-Za-z0-9])/,
    keywords: ['twilio', 'sid', 'api_key', 'apikey', 'key'],
    baseAdjust: -0.3,
  },
  // HashiCorp Vault service, batch and recovery tokens (1.10+ format) and Terraform Cloud tokens.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'HashiCorp Vault',
    prefixes: ['hvs.', 'hvr.'],
    body: /[A-Za-z0-9_-]{90,120}(?![A-Za-z0-9_-])/,
  },
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'HashiCorp Vault',
    prefixes: ['hvb.'],
    body: /[A-Za-z0-9_-]{138,300}(?![A-Za-z0-9_-])/,
  },
  // DigitalOcean personal, OAuth and refresh tokens.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'DigitalOcean',
    prefixes: ['dop_v1_', 'doo_v1_', 'dor_v1_'],
    body: /[a-f0-9]{64}(?![A-Za-z0-9])/,
  },
  // Atlassian API tokens (ATATT3…, with a CRC at the end that Atlassian does not document).
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Atlassian',
    prefixes: ['ATATT3'],
    body: /[A-Za-z0-9_=-]{180,200}(?![A-Za-z0-9_=-])/,
  },
  // Heroku platform API keys (new format).
  { type: 'GENERIC_PASSWORD', vendor: 'Heroku', prefixes: ['HRKU-AA'], body: /[0-9A-Za-z_-]{58}(?![A-Za-z0-9_-])/ },
  // Dropbox short-lived access tokens.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Dropbox',
    prefixes: ['sl.'],
    body: /[A-Za-z0-9_=-]{130,1400}(?![A-Za-z0-9_=-])/,
  },
  // Twitter / X app-only bearer tokens: 22 A's then URL-encoded base64.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Twitter',
    prefixes: ['AAAAAAAAAAAAAAAAAAAAA'],
    body: /[A-Za-z0-9%]{40,200}(?![A-Za-z0-9%])/,
  },
  // Anthropic is typed by its own detector (sk-ant-…); Slack, OpenAI, Stripe and JWTs likewise.
  // Sentry user and organisation auth tokens.
  { type: 'GENERIC_PASSWORD', vendor: 'Sentry', prefixes: ['sntryu_'], body: /[a-f0-9]{64}(?![A-Za-z0-9])/ },
  // Organisation tokens: sntrys_, base64 of a JSON payload (iat, url, region_url, org), _, a 43-character secret.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Sentry',
    prefixes: ['sntrys_eyJ'],
    body: /[A-Za-z0-9+/]{30,400}={0,2}_[A-Za-z0-9+/]{43}(?![A-Za-z0-9+/=_])/,
  },
  // Datadog has no prefix; its keys are named (see password-detectors). Discord bot tokens: id . time . hmac.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Discord',
    prefixes: ['MT', 'Mj', 'Mz', 'ND', 'NT', 'Nj', 'Nz', 'OD', 'OT'],
    body: /[A-Za-z0-9]{21,24}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])/,
  },
  // Amazon Bedrock long-term API keys: ABSK + base64 of "BedrockAPIKey-…:<secret>" (the prefix is that encoding).
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Amazon Bedrock',
    prefixes: ['ABSKQmVkcm9ja0FQSUtleS'],
    body: /[A-Za-z0-9+/]{40,400}={0,2}(?![A-Za-z0-9+/=])/,
  },
  // Square: OAuth and personal access tokens (EAAA, 64 characters in all), legacy sq0atp- tokens, sq0csp- secrets.
  { type: 'GENERIC_PASSWORD', vendor: 'Square', prefixes: ['EAAA'], body: /[A-Za-z0-9_-]{60}(?![A-Za-z0-9_-])/ },
  { type: 'GENERIC_PASSWORD', vendor: 'Square', prefixes: ['sq0atp-'], body: /[A-Za-z0-9_-]{22}(?![A-Za-z0-9_-])/ },
  { type: 'GENERIC_PASSWORD', vendor: 'Square', prefixes: ['sq0csp-'], body: /[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/ },
  // SonarQube / SonarCloud user, project and global analysis tokens: squ_, sqp_, sqa_ + 40 hex.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Sonar',
    prefixes: ['squ_', 'sqp_', 'sqa_'],
    body: /[a-fA-F0-9]{40}(?![A-Za-z0-9_])/,
  },
  // New Relic user API keys (NRAK-, 27), browser keys (NRJS-, 19 hex), Insights insert/query keys (NRII-/NRIQ-, 32).
  { type: 'GENERIC_PASSWORD', vendor: 'New Relic', prefixes: ['NRAK-'], body: /[A-Z0-9]{27}(?![A-Za-z0-9])/ },
  { type: 'GENERIC_PASSWORD', vendor: 'New Relic', prefixes: ['NRJS-'], body: /[a-f0-9]{19}(?![A-Za-z0-9])/ },
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'New Relic',
    prefixes: ['NRII-', 'NRIQ-'],
    body: /[A-Za-z0-9_-]{32}(?![A-Za-z0-9_-])/,
  },
  // Brevo (Sendinblue) API keys: xkeysib- + 64 hex + - + 16 alphanumerics; SMTP keys xsmtpsib- alike.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Brevo',
    prefixes: ['xkeysib-', 'xsmtpsib-'],
    body: /[a-f0-9]{64}-[A-Za-z0-9]{16}(?![A-Za-z0-9])/,
  },
  // Docker Hub personal and organisation access tokens.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Docker Hub',
    prefixes: ['dckr_pat_', 'dckr_oat_'],
    body: /[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])/,
  },
  // Fly.io macaroon tokens (fm1a_, fm1r_, fm2_ + base64), also sent as "FlyV1 fm2_…".
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Fly.io',
    prefixes: ['fm1a_', 'fm1r_', 'fm2_'],
    body: /[A-Za-z0-9+/]{100,4000}={0,3}/,
  },
  // Tailscale keys: tskey-<kind>-<key id>-<secret>.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Tailscale',
    prefixes: ['tskey-'],
    body: /(?:api|auth|client|scim|webhook)-[A-Za-z0-9]{6,24}-[A-Za-z0-9]{16,64}(?![A-Za-z0-9_-])/,
  },
  // PlanetScale service tokens, database passwords and OAuth tokens.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'PlanetScale',
    prefixes: ['pscale_tkn_', 'pscale_pw_', 'pscale_oauth_'],
    body: /[A-Za-z0-9_=.-]{32,64}(?![A-Za-z0-9_=.-])/,
  },
  // Render API keys.
  { type: 'GENERIC_PASSWORD', vendor: 'Render', prefixes: ['rnd_'], body: /[A-Za-z0-9]{32}(?![A-Za-z0-9_])/ },
  // Supabase personal access tokens: sbp_ + 40 hex.
  { type: 'GENERIC_PASSWORD', vendor: 'Supabase', prefixes: ['sbp_'], body: /[a-f0-9]{40}(?![A-Za-z0-9_])/ },
  // Model providers: Groq (gsk_ + 52), xAI (xai- + 80), Perplexity (pplx- + 48), Replicate (r8_ + 37).
  { type: 'GENERIC_PASSWORD', vendor: 'Groq', prefixes: ['gsk_'], body: /[A-Za-z0-9]{52}(?![A-Za-z0-9_])/ },
  { type: 'GENERIC_PASSWORD', vendor: 'xAI', prefixes: ['xai-'], body: /[A-Za-z0-9]{80}(?![A-Za-z0-9_-])/ },
  { type: 'GENERIC_PASSWORD', vendor: 'Perplexity', prefixes: ['pplx-'], body: /[A-Za-z0-9]{48}(?![A-Za-z0-9_-])/ },
  { type: 'GENERIC_PASSWORD', vendor: 'Replicate', prefixes: ['r8_'], body: /[A-Za-z0-9]{37}(?![A-Za-z0-9_])/ },
  // JFrog: API keys (AKCp + 69) and reference tokens (base64 of "reftkn:01:…", 64 characters in all).
  { type: 'GENERIC_PASSWORD', vendor: 'JFrog', prefixes: ['AKCp'], body: /[A-Za-z0-9]{69}(?![A-Za-z0-9])/ },
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'JFrog',
    prefixes: ['cmVmdGtuOjAxOj'],
    body: /[A-Za-z0-9+/]{50}(?![A-Za-z0-9+/])/,
  },
  // Clojars deploy tokens.
  { type: 'GENERIC_PASSWORD', vendor: 'Clojars', prefixes: ['CLOJARS_'], body: /[a-f0-9]{60}(?![A-Za-z0-9_])/ },
  // Dynatrace tokens: dt0<kind><2 digits> . 24-character public id . 64-character secret.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Dynatrace',
    prefixes: ['dt0'],
    body: /[a-z][0-9]{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}(?![A-Za-z0-9])/,
  },
  // EasyPost production (EZAK) and test (EZTK) API keys.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'EasyPost',
    prefixes: ['EZAK', 'EZTK'],
    body: /[A-Za-z0-9]{54}(?![A-Za-z0-9])/,
  },
  // Flutterwave secret keys (live and test) and encryption keys.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Flutterwave',
    prefixes: ['FLWSECK-', 'FLWSECK_TEST-'],
    body: /[A-Za-z0-9]{32}-X(?![A-Za-z0-9])/,
  },
  // NuGet API keys: oy2 + 43 lower-case alphanumerics.
  { type: 'GENERIC_PASSWORD', vendor: 'NuGet', prefixes: ['oy2'], body: /[a-z0-9]{43}(?![A-Za-z0-9])/ },
  // Google OAuth 2.0 access tokens.
  { type: 'GENERIC_PASSWORD', vendor: 'Google OAuth', prefixes: ['ya29.'], body: /[A-Za-z0-9_-]{30,2048}/ },
  // Typeform personal access tokens.
  { type: 'GENERIC_PASSWORD', vendor: 'Typeform', prefixes: ['tfp_'], body: /[A-Za-z0-9_.=-]{59}(?![A-Za-z0-9_.=-])/ },
  // ReadMe API keys.
  { type: 'GENERIC_PASSWORD', vendor: 'ReadMe', prefixes: ['rdme_'], body: /[a-z0-9]{70}(?![A-Za-z0-9])/ },
  // RubyGems API keys.
  { type: 'GENERIC_PASSWORD', vendor: 'RubyGems', prefixes: ['rubygems_'], body: /[a-f0-9]{48}(?![A-Za-z0-9])/ },
  // Shippo live and test API tokens.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Shippo',
    prefixes: ['shippo_live_', 'shippo_test_'],
    body: /[a-f0-9]{40}(?![A-Za-z0-9])/,
  },
  // Mapbox secret access tokens: sk. + a JWT-like payload and signature.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Mapbox',
    prefixes: ['sk.eyJ'],
    body: /[A-Za-z0-9_-]{50,400}\.[A-Za-z0-9_-]{20,100}(?![A-Za-z0-9_-])/,
  },
  // OpenShift user OAuth tokens.
  { type: 'GENERIC_PASSWORD', vendor: 'OpenShift', prefixes: ['sha256~'], body: /[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/ },
  // Prefect API keys.
  { type: 'GENERIC_PASSWORD', vendor: 'Prefect', prefixes: ['pnu_'], body: /[A-Za-z0-9]{36}(?![A-Za-z0-9])/ },
  // Scalingo API tokens.
  { type: 'GENERIC_PASSWORD', vendor: 'Scalingo', prefixes: ['tk-us-'], body: /[A-Za-z0-9_-]{48}(?![A-Za-z0-9_-])/ },
  // 42 (intra) OAuth application secrets.
  {
    type: 'GENERIC_PASSWORD',
    vendor: '42 intra',
    prefixes: ['s-s4t2ud-', 's-s4t2af-'],
    body: /[a-f0-9]{64}(?![A-Za-z0-9])/,
  },
  // Contentful personal access tokens.
  { type: 'GENERIC_PASSWORD', vendor: 'Contentful', prefixes: ['CFPAT-'], body: /[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/ },
  // Netlify personal access tokens.
  { type: 'GENERIC_PASSWORD', vendor: 'Netlify', prefixes: ['nfp_'], body: /[A-Za-z0-9]{36}(?![A-Za-z0-9_])/ },
  // Buildkite user access tokens.
  { type: 'GENERIC_PASSWORD', vendor: 'Buildkite', prefixes: ['bkua_'], body: /[a-f0-9]{40}(?![A-Za-z0-9_])/ },
  // LangSmith personal access tokens and service keys: lsv2_pt_/lsv2_sk_ + 32 hex + _ + 10 hex.
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'LangSmith',
    prefixes: ['lsv2_pt_', 'lsv2_sk_'],
    body: /[a-f0-9]{32}_[a-f0-9]{10}(?![A-Za-z0-9_])/,
  },
  // Alibaba Cloud AccessKey ids (LTAI + 12–20 alphanumerics): the id half of a key pair, named by its prefix.
  { type: 'GENERIC_PASSWORD', vendor: 'Alibaba Cloud', prefixes: ['LTAI'], body: /[A-Za-z0-9]{12,20}(?![A-Za-z0-9])/ },
] satisfies SecretFormat[]);

interface CompiledFormat {
  readonly row: SecretFormat;
  readonly prefix: string;
  readonly body: RegExp;
  readonly lex: Lexicon | undefined;
  readonly examples: ReadonlySet<string>;
  /** An id-like format (naming words and a lowered base): reported only when a word names it. */
  readonly named: boolean;
}

/** Rows by the first two characters of each prefix (the prefilter), indexed by first * 128 + second. */
const BY_START: (CompiledFormat[] | undefined)[] = new Array(128 * 128);
/** SECRET_START[first * 128 + second] is 1 when some prefix of the catalogue starts with those two characters. */
export const CATALOGUE_START = new Uint8Array(128 * 128);
/**
 * The third characters of the prefixes under each first two, as a 128-bit set: bit c of CATALOGUE_THIRD[(first * 128
 * + second) * 4 + (c >> 5)] is set when some prefix continues with c (every bit, for a two-character prefix). The
 * scanner's plain-word shortcut reads it, so "what" stays a plain word beside whsec_.
 */
export const CATALOGUE_THIRD = new Uint32Array(128 * 128 * 4);

for (const row of SECRET_FORMATS) {
  const body = new RegExp(row.body.source, 'y');
  const lex = row.keywords ? lexicon(row.keywords, []) : undefined;
  const examples = new Set(row.examples ?? []);
  for (const prefix of row.prefixes) {
    const key = prefix.charCodeAt(0) * 128 + prefix.charCodeAt(1);
    CATALOGUE_START[key] = 1;
    if (prefix.length === 2) CATALOGUE_THIRD.fill(0xffffffff, key * 4, key * 4 + 4);
    else {
      const c = prefix.charCodeAt(2);
      CATALOGUE_THIRD[key * 4 + (c >> 5)] |= 1 << (c & 31);
    }
    const list = BY_START[key] ?? [];
    BY_START[key] = list;
    // Longer prefixes first, so A3T… is tried before A3-… and the most specific row wins.
    const named = lex !== undefined && (row.baseAdjust ?? 0) < 0;
    list.push({ row, prefix, body, lex, examples, named });
    list.sort((a, b) => b.prefix.length - a.prefix.length);
  }
}

/** The selection's types a catalogue row may emit. */
export const CATALOGUE_TYPES: readonly string[] = [...new Set(SECRET_FORMATS.map((r) => r.type))];

/**
 * Lower-case prefixes that end in a dot after a short word (hvs., dp.pt., sl.): the scanner passes plain words
 * followed by a dot over, except these. True when the word [i, i + len) is one of them.
 */
export function isDotPrefixWord(t: string, i: number, len: number): boolean {
  if (len === 2) return (t.startsWith('dp', i) || t.startsWith('sl', i)) && t.charCodeAt(i + 2) === 46;
  return len === 3 && t.charCodeAt(i) === 104 && t.charCodeAt(i + 1) === 118 && t.charCodeAt(i + 3) === 46;
}

/** BASE62_DIGIT[c] is the base62 value of ASCII character c (0-9, A-Z, a-z), or -1. */
const BASE62_DIGIT = new Int8Array(128).fill(-1);
for (const [d, ch] of [...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'].entries())
  BASE62_DIGIT[ch.charCodeAt(0)] = d;

/** The CRC-32 (IEEE, as zlib's crc32) byte table. */
const CRC32_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

/** CRC-32 of the ASCII characters [0, end) of s (each one byte, as in its UTF-8), unsigned; -1 for non-ASCII. */
function crc32Ascii(s: string, end: number): number {
  let c = -1;
  for (let k = 0; k < end; k++) {
    const ch = s.charCodeAt(k);
    if (ch >= 128) return -1;
    c = CRC32_TABLE[(c ^ ch) & 0xff] ^ (c >>> 8);
  }
  return (c ^ -1) >>> 0;
}

/** GitHub/npm layout: the 6 base62 characters at the end are the CRC32 of the 30 before them. */
export function crc32Base62Valid(body: string): boolean {
  if (body.length !== 36) return false;
  let sum = 0;
  for (let k = 30; k < 36; k++) {
    const ch = body.charCodeAt(k);
    const d = ch < 128 ? BASE62_DIGIT[ch] : -1;
    if (d < 0) return false;
    sum = sum * 62 + d;
  }
  // The table walk covers the bodies the rows allow (ASCII); anything else goes through zlib's UTF-8 encoding.
  const ascii = crc32Ascii(body, 30);
  return (ascii >= 0 ? ascii : crc32(body.slice(0, 30))) === sum;
}

/** True when base64 text decodes to header.payload[.signature] with a JSON-object header (a JWT). */
function base64JwtValid(value: string): boolean {
  const decoded = Buffer.from(value.slice(0, 2400), 'base64').toString('latin1');
  const dot = decoded.indexOf('.');
  if (!decoded.startsWith('eyJ') || dot < 10) return false;
  const header = Buffer.from(decoded.slice(0, dot), 'base64url').toString('latin1');
  return header.startsWith('{') && decoded.charCodeAt(dot + 1) === 101;
}

function checksumOf(kind: TokenChecksum, token: string, body: string): boolean {
  switch (kind) {
    case 'crc32-base62':
      return crc32Base62Valid(body);
    case 'bech32':
      return bech32Valid(token);
    case 'base64-jwt':
      return base64JwtValid(token);
  }
}

/** Strength of a random-looking body from its entropy: 4.5 bits/char and above counts as fully random. */
export function randomness(h: number): number {
  const x = (h - 2.5) / 2;
  return x < 0 ? 0 : Math.min(x, 1);
}

/** True when some character repeats `n` times in a row (aaaaaaaa, 00000000): no generator emits that by chance. */
function longRun(body: string, n: number): boolean {
  let run = 1;
  for (let k = 1; k < body.length; k++) {
    run = body.charCodeAt(k) === body.charCodeAt(k - 1) ? run + 1 : 1;
    if (run >= n) return true;
  }
  return false;
}

/** True when the body repeats a unit of at most `max` characters (1234abcd1234abcd…): a stand-in, not random. */
function periodic(body: string, max: number): boolean {
  for (let p = 1; p <= max && p * 2 <= body.length; p++) {
    let k = p;
    while (k < body.length && body.charCodeAt(k) === body.charCodeAt(k - p)) k++;
    if (k === body.length) return true;
  }
  return false;
}

/** A catalogue body that stands in for a secret: low entropy, a placeholder word, or a repeated run or unit. */
function standIn(body: string, h: number): boolean {
  return fakeBody(body, h) || longRun(body, 8) || periodic(body, 8);
}

/** True when a secret's random part (with entropy h) is a placeholder or clearly not random (xxxx, 1111, "EXAMPLE"). */
export function fakeBody(body: string, h: number): boolean {
  if (body.length >= 12 && h < 2.5) return true;
  // Stand-ins are short or say so at either end; a long random body is only sampled there.
  if (body.length <= 64) return isPlaceholderValue(body);
  return isPlaceholderValue(body.slice(0, 32)) || isPlaceholderValue(body.slice(-32));
}

/**
 * Tries the catalogue's rows whose prefix starts at `i` (the caller checked CATALOGUE_START). Emits the token
 * and returns its end, or -1 when no row's prefix and body fit.
 */
export function scanCatalogueAt(st: ScanState, i: number): number {
  const t = st.text;
  const rows = BY_START[t.charCodeAt(i) * 128 + t.charCodeAt(i + 1)];
  if (!rows) return -1;
  for (const f of rows) {
    if (!t.startsWith(f.prefix, i) || !st.sel.enabled.has(f.row.type)) continue;
    const from = i + f.prefix.length;
    f.body.lastIndex = from;
    if (!f.body.test(t)) continue;
    const end = f.body.lastIndex;
    const body = t.slice(from, end);
    const h = shannonEntropy(body);
    const placeholder = f.examples.has(body) || standIn(body, h);
    // The prefix and the body's alphabet and length are the format's structure check; a checksum, where the
    // format has one, must pass too (a failed one leaves the token neutral: test and hand-made tokens exist).
    const valid = f.row.checksum ? placeholder || checksumOf(f.row.checksum, t.slice(i, end), body) : true;
    if (!valid && f.row.checksumRequired) continue;
    const context = f.lex ? polarityBefore(t, i, 40, f.lex) : 0;
    // A row with naming words and a lowered base (an id-like format) is reported only when named.
    if (f.named && context <= 0) continue;
    st.emit(
      f.row.type,
      i,
      end,
      evidence({ valid: valid ? true : null, placeholder, strength: randomness(h), context: Math.max(context, 0) }),
      f.lex && context > 0 ? 0 : (f.row.baseAdjust ?? 0),
    );
    return end;
  }
  return -1;
}

/**
 * True when a catalogue row owns the value at `i`: a typed row's prefix is there, or a GENERIC_PASSWORD row's prefix
 * and body are (the key-based password detectors leave such values to the catalogue, which knows their format).
 */
export function cataloguePrefixAt(t: string, i: number): boolean {
  const rows = BY_START[t.charCodeAt(i) * 128 + t.charCodeAt(i + 1)];
  if (!rows) return false;
  for (const f of rows) {
    if (!t.startsWith(f.prefix, i)) continue;
    if (f.row.type !== 'GENERIC_PASSWORD') return true;
    if (f.named) continue;
    f.body.lastIndex = i + f.prefix.length;
    if (f.body.test(t)) return true;
  }
  return false;
}

/**
 * Microsoft Entra ID (Azure AD) client secrets carry their marker inside the token: three characters, a digit, `Q~`,
 * then 31 to 34 more, 40 in all, from [A-Za-z0-9_~.-]. The scanner calls this at a `~` that follows a digit and `Q`;
 * the token must stand on its own (between blanks, quotes, `=`, `:`, `,`, brackets or backslashes).
 */
const AZURE_CLIENT_SECRET = /[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}/y;

/** Characters that may stand right before or after an Azure client secret (gitleaks' boundaries, and `;`). */
function azureBoundary(c: number, before: boolean): boolean {
  if (c <= 32 || c === 34 || c === 39 || c === 96 || c === 92 || c === 44 || c === 41 || c === 59) return true;
  return before ? c === 62 || c === 61 || c === 58 || c === 40 : c === 60;
}

/** An Azure client secret whose `Q~` marker ends at the `~` at `tilde`: emits it and returns its end, or -1. */
export function scanAzureClientSecret(st: ScanState, tilde: number): number {
  const t = st.text;
  const start = tilde - 5;
  if (start < 0 || !st.sel.enabled.has('GENERIC_PASSWORD')) return -1;
  if (start > 0 && !azureBoundary(t.charCodeAt(start - 1), true)) return -1;
  AZURE_CLIENT_SECRET.lastIndex = start;
  if (!AZURE_CLIENT_SECRET.test(t)) return -1;
  const end = AZURE_CLIENT_SECRET.lastIndex;
  if (end < st.n && !azureBoundary(t.charCodeAt(end), false)) return -1;
  const secret = t.slice(start, end);
  const h = shannonEntropy(secret);
  const placeholder = standIn(secret.slice(6), h);
  // A candidate before this one may end after `start` only if it overlaps it; keep the list in text order.
  const last = st.out.length > 0 ? st.out[st.out.length - 1] : undefined;
  if (last !== undefined && last.start > start) st.unordered = true;
  st.emit('GENERIC_PASSWORD', start, end, evidence({ valid: true, placeholder, strength: randomness(h) }));
  return end;
}

/** A credential that is a whole URL: a vendor's webhook address, whose path is the secret. */
export interface WebhookFormat {
  readonly type: string;
  readonly vendor: string;
  /** The host, or with a leading dot any host under that domain. */
  readonly host: string;
  /** The path after the host, anchored; its last segment is the secret part. */
  readonly path: RegExp;
}

/** Webhook URLs that work without any other credential: whoever holds one can post as the integration. */
export const WEBHOOK_FORMATS: readonly WebhookFormat[] = Object.freeze([
  {
    type: 'SLACK_TOKEN',
    vendor: 'Slack',
    host: 'hooks.slack.com',
    // Incoming webhooks (services/T…/B…/secret), Workflow Builder webhooks (workflows/T…/A…/id/secret),
    // triggers (triggers/T…/id/secret), or the path's parts in one run.
    path: /\/(?:services\/T[A-Z0-9]{6,12}\/B[A-Z0-9]{6,12}\/[A-Za-z0-9]{24}|workflows\/T[A-Z0-9]{6,12}\/A[A-Z0-9]{6,12}\/[0-9]{8,20}\/[A-Za-z0-9]{20,40}|triggers\/T[A-Z0-9]{6,12}\/[0-9]{8,20}\/[a-f0-9]{32}|(?:services|workflows|triggers)\/[A-Za-z0-9+/]{43,56})(?![A-Za-z0-9+/])/,
  },
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Microsoft Teams',
    host: '.webhook.office.com',
    path: /\/webhookb2\/[a-z0-9-]{36}@[a-z0-9-]{36}\/IncomingWebhook\/[a-z0-9]{32}\/[a-z0-9-]{36}(?:\/[A-Za-z0-9_-]{20,80})?/i,
  },
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Discord',
    host: 'discord.com',
    path: /\/api\/webhooks\/[0-9]{17,20}\/[A-Za-z0-9_-]{60,68}(?![A-Za-z0-9_-])/,
  },
  {
    type: 'GENERIC_PASSWORD',
    vendor: 'Discord',
    host: 'discordapp.com',
    path: /\/api\/webhooks\/[0-9]{17,20}\/[A-Za-z0-9_-]{60,68}(?![A-Za-z0-9_-])/,
  },
] satisfies WebhookFormat[]);

const WEBHOOK_PATHS = WEBHOOK_FORMATS.map((w) => new RegExp(w.path.source, `y${w.path.flags}`));

/**
 * A webhook URL whose host is [hostStart, hostEnd) and whose scheme starts at `start`: emits it whole as the
 * vendor's credential and returns its end, or -1 when the host and path are no webhook's (or a stand-in's).
 */
export function scanWebhookUrl(st: ScanState, start: number, hostStart: number, hostEnd: number): number {
  const t = st.text;
  for (let k = 0; k < WEBHOOK_FORMATS.length; k++) {
    const w = WEBHOOK_FORMATS[k]!;
    const ok = w.host.startsWith('.')
      ? hostEnd - hostStart > w.host.length && t.slice(hostEnd - w.host.length, hostEnd).toLowerCase() === w.host
      : hostEnd - hostStart === w.host.length && t.slice(hostStart, hostEnd).toLowerCase() === w.host;
    if (!ok || !st.sel.enabled.has(w.type)) continue;
    const path = WEBHOOK_PATHS[k]!;
    path.lastIndex = hostEnd;
    if (!path.test(t)) continue;
    const end = path.lastIndex;
    const secret = t.slice(t.lastIndexOf('/', end - 1) + 1, end);
    const h = shannonEntropy(secret);
    // The documentation's stand-in (T00000000/B00000000/XXXX…) is an ordinary URL.
    if (standIn(secret, h) || /X{8}|0{8}/.test(t.slice(hostEnd, end))) return -1;
    st.emit(w.type, start, end, evidence({ valid: true, strength: randomness(h), context: 0 }));
    return end;
  }
  return -1;
}

/**
 * Vendors whose tokens carry no prefix: the key that holds the value names the vendor (`DATADOG_API_KEY`,
 * `"discordToken" =>`), and the value must have the vendor's format. A value outside it is a stand-in or something
 * else (a chat id, a label, a client id), not the vendor's token.
 */
export interface KeyedFormat {
  readonly vendor: string;
  /** Lower-case words, one of which the key name holds (case-insensitively): the vendor's names. */
  readonly words: readonly string[];
  /** The whole value. */
  readonly value: RegExp;
  /**
   * False when the vendor has other token formats than `value` (or the format is one of several the key may hold):
   * a value outside it is left to the generic key rules instead of being rejected as not the vendor's token.
   */
  readonly exclusive?: boolean;
}

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

export const KEYED_FORMATS: readonly KeyedFormat[] = Object.freeze([
  // Telegram bot tokens: the bot's numeric id (the Bot API's own example has 6 digits; ids may take up to 52 bits,
  // 16 digits), a colon, 35 base64url characters.
  { vendor: 'Telegram', words: ['telegram'], value: /^\d{5,16}:[A-Za-z0-9_-]{35}$/ },
  // Mailchimp API keys: 32 hex digits and the data-center suffix.
  { vendor: 'Mailchimp', words: ['mailchimp'], value: /^[0-9a-f]{32}-us\d{1,2}$/ },
  // Datadog API keys (32 hex) and application keys (40).
  { vendor: 'Datadog', words: ['datadog', 'dd_api', 'dd_app'], value: /^(?:[a-f0-9]{32}|[a-z0-9]{40})$/ },
  // Discord bot tokens (64 hex, legacy) and OAuth client secrets (32 base64url).
  { vendor: 'Discord', words: ['discord'], value: /^(?:[a-f0-9]{64}|[A-Za-z0-9_-]{32})$/ },
  // Dropbox legacy app tokens (15) and long-lived tokens (11 + ten A + 43).
  { vendor: 'Dropbox', words: ['dropbox'], value: /^(?:[a-z0-9]{15}|[a-z0-9]{11}A{10}[A-Za-z0-9_=-]{43})$/ },
  // Twitter / X consumer keys (25), consumer and access secrets (45–50), access tokens (user id - 20–40).
  {
    vendor: 'Twitter',
    words: ['twitter', 'twtr'],
    value: /^(?:[A-Za-z0-9]{25}|[A-Za-z0-9]{45}|[A-Za-z0-9]{50}|\d{15,25}-[A-Za-z0-9]{20,40})$/,
  },
  // Heroku API keys (v1) and HubSpot private keys: UUIDs.
  { vendor: 'Heroku', words: ['heroku'], value: new RegExp(`^${UUID}$`) },
  { vendor: 'HubSpot', words: ['hubspot'], value: new RegExp(`^${UUID}$`) },
  // 32-hex API keys and client secrets.
  {
    vendor: 'Adobe, Algolia, Codecov, Flickr, Linear, Bittrex',
    words: ['adobe', 'algolia', 'codecov', 'flickr', 'linear', 'bittrex'],
    value: /^[a-f0-9]{32}$/,
  },
  // 40-character keys: Zendesk, SendBird, Cisco Meraki.
  { vendor: 'Zendesk, SendBird, Cisco Meraki', words: ['zendesk', 'sendbird', 'meraki'], value: /^[a-z0-9]{40}$/ },
  // Sentry user tokens and FreshBooks access tokens (64 hex).
  { vendor: 'Sentry, FreshBooks', words: ['sentry', 'freshbooks'], value: /^[a-f0-9]{64}$/ },
  // Lower-case alphanumeric tokens of fixed length.
  { vendor: 'Mattermost', words: ['mattermost'], value: /^[a-z0-9]{26}$/ },
  { vendor: 'MessageBird', words: ['messagebird', 'message_bird', 'message-bird'], value: /^[a-z0-9]{25}$/ },
  { vendor: 'Travis CI', words: ['travis'], value: /^[a-z0-9]{22}$/ },
  { vendor: 'Twitch', words: ['twitch'], value: /^[a-z0-9]{30}$/ },
  { vendor: 'Etsy', words: ['etsy'], value: /^[a-z0-9]{24}$/ },
  { vendor: 'Finnhub, Finicity', words: ['finnhub', 'finicity'], value: /^(?:[a-z0-9]{20}|[a-f0-9]{32})$/ },
  { vendor: 'Asana', words: ['asana'], value: /^[a-z0-9]{32}$/ },
  { vendor: 'Bitbucket', words: ['bitbucket'], value: /^(?:[a-z0-9]{32}|[a-z0-9_=-]{64})$/ },
  // Plaid secrets (30 hex), client ids (24 hex) and access tokens (access-<environment>-<UUID>).
  {
    vendor: 'Plaid',
    words: ['plaid'],
    value: new RegExp(`^(?:[a-f0-9]{30}|[a-f0-9]{24}|access-(?:sandbox|development|production)-${UUID})$`),
  },
  { vendor: 'KuCoin', words: ['kucoin'], value: new RegExp(`^(?:[a-f0-9]{24}|${UUID})$`) },
  { vendor: 'Contentful', words: ['contentful'], value: /^[A-Za-z0-9=_-]{43}$/ },
  { vendor: 'New York Times', words: ['nytimes', 'newyorktimes'], value: /^[A-Za-z0-9=_-]{32}$/ },
  // Airtable legacy API keys: key + 14 alphanumerics (personal access tokens, pat…, are found by their key too).
  { vendor: 'Airtable', words: ['airtable'], value: /^key[A-Za-z0-9]{14}$/, exclusive: false },
  // Alibaba Cloud AccessKey secrets: 30 alphanumerics.
  { vendor: 'Alibaba Cloud', words: ['alibaba', 'aliyun'], value: /^[A-Za-z0-9]{30}$/, exclusive: false },
  // Atlassian (Jira, Confluence) API tokens before the ATATT3 format: 24 alphanumerics.
  { vendor: 'Atlassian', words: ['atlassian', 'confluence', 'jira'], value: /^[A-Za-z0-9]{24}$/, exclusive: false },
  // Cloudflare API tokens (40 base64url characters) and Global API keys (37 hex).
  { vendor: 'Cloudflare', words: ['cloudflare'], value: /^(?:[A-Za-z0-9_-]{40}|[a-f0-9]{37})$/, exclusive: false },
  // Confluent Cloud API keys (16 upper-case alphanumerics) and their secrets (64 base64 characters).
  { vendor: 'Confluent', words: ['confluent'], value: /^(?:[A-Z0-9]{16}|[A-Za-z0-9+/]{64})$/, exclusive: false },
  // Drone CI personal tokens: 32 alphanumerics.
  { vendor: 'Drone CI', words: ['drone'], value: /^[A-Za-z0-9]{32}$/, exclusive: false },
  // Facebook app secrets (32 hex) and app access tokens (app id | secret).
  {
    vendor: 'Facebook',
    words: ['facebook'],
    value: /^(?:[a-f0-9]{32}|\d{15,16}\|[A-Za-z0-9_-]{27,43})$/,
    exclusive: false,
  },
  // JFrog identity and reference tokens (64 base64 characters) under a JFrog, Artifactory or Bintray key.
  { vendor: 'JFrog', words: ['jfrog', 'artifactory', 'bintray'], value: /^[A-Za-z0-9+/]{64}$/, exclusive: false },
  // LinkedIn client secrets: 16 alphanumerics.
  { vendor: 'LinkedIn', words: ['linkedin'], value: /^[A-Za-z0-9]{16}$/, exclusive: false },
  // Looker API3 client secrets: 24 alphanumerics.
  { vendor: 'Looker', words: ['looker'], value: /^[A-Za-z0-9]{24}$/, exclusive: false },
  // Okta API tokens: 00 + 40 base64url characters.
  { vendor: 'Okta', words: ['okta'], value: /^00[A-Za-z0-9_-]{40}$/, exclusive: false },
  // Snyk and Squarespace API keys: UUIDs.
  { vendor: 'Snyk, Squarespace', words: ['snyk', 'squarespace'], value: new RegExp(`^${UUID}$`), exclusive: false },
  // SonarQube tokens from before the squ_/sqp_/sqa_ prefixes: 40 hex.
  { vendor: 'Sonar', words: ['sonar'], value: /^[a-f0-9]{40}$/, exclusive: false },
  // Sourcegraph access tokens without the sgp_ prefix (before 2023): 40 hex.
  { vendor: 'Sourcegraph', words: ['sourcegraph'], value: /^[a-fA-F0-9]{40}$/, exclusive: false },
  // Sumo Logic access keys: 64 alphanumerics (access ids, su + 12, are not secret).
  {
    vendor: 'Sumo Logic',
    words: ['sumologic', 'sumo_', 'sumo-', 'sumotoken', 'sumokey'],
    value: /^[A-Za-z0-9]{64}$/,
    exclusive: false,
  },
  // Octopus Deploy API keys: API- + upper-case alphanumerics (a prefix too common in prose to scan for unnamed).
  { vendor: 'Octopus Deploy', words: ['octopus'], value: /^API-[A-Z0-9]{25,32}$/, exclusive: false },
  // Twilio auth tokens: 32 hex.
  { vendor: 'Twilio', words: ['twilio'], value: /^[a-f0-9]{32}$/, exclusive: false },
] satisfies KeyedFormat[]);

/** The first three letters of every vendor word (lower case, as a number): a key without any costs one pass. */
const KEYED_TRIGRAMS = new Set<number>();
function trigramAt(s: string, k: number): number {
  return ((s.charCodeAt(k) | 32) << 16) | ((s.charCodeAt(k + 1) | 32) << 8) | (s.charCodeAt(k + 2) | 32);
}
for (const f of KEYED_FORMATS) for (const w of f.words) KEYED_TRIGRAMS.add(trigramAt(w, 0));

/** The keyed format of a vendor the key name names, or undefined. */
export function keyedFormatFor(keyName: string): KeyedFormat | undefined {
  let hit = false;
  for (let k = 0; k + 3 <= keyName.length && !hit; k++) hit = KEYED_TRIGRAMS.has(trigramAt(keyName, k));
  if (!hit) return undefined;
  const lower = keyName.toLowerCase();
  for (const f of KEYED_FORMATS) for (const w of f.words) if (lower.includes(w)) return f;
  return undefined;
}

/**
 * The value [start, end) of a key that names a vendor with a keyed format: reports it as a GENERIC_PASSWORD when it
 * fits (a stand-in in the format is reported as a placeholder). Returns true when it fits.
 */
export function emitKeyedValue(st: ScanState, format: KeyedFormat, start: number, end: number): boolean {
  const v = st.text.slice(start, end);
  if (!format.value.test(v)) return false;
  const h = shannonEntropy(v);
  const placeholder = standIn(v, h);
  st.emit('GENERIC_PASSWORD', start, end, evidence({ valid: true, placeholder, context: 1, strength: randomness(h) }));
  return true;
}
