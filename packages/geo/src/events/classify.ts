/** AI engines that refer visitors, by referrer host (suffix match) — what GEO users measure. */
const AI_REFERRERS: readonly [string, string][] = [
  ['chatgpt.com', 'chatgpt'],
  ['chat.openai.com', 'chatgpt'],
  ['openai.com', 'chatgpt'],
  ['perplexity.ai', 'perplexity'],
  ['gemini.google.com', 'gemini'],
  ['bard.google.com', 'gemini'],
  ['copilot.microsoft.com', 'copilot'],
  ['copilot.cloud.microsoft', 'copilot'],
  ['claude.ai', 'claude'],
  ['chat.deepseek.com', 'deepseek'],
  ['chat.mistral.ai', 'mistral'],
  ['meta.ai', 'meta_ai'],
  ['grok.com', 'grok'],
  ['you.com', 'you'],
  ['phind.com', 'phind'],
  ['poe.com', 'poe'],
  ['kagi.com', 'kagi'],
];

/** `utm_source` values AI engines append to the links they cite. */
const AI_UTM_SOURCES = new Map<string, string>([
  ['chatgpt.com', 'chatgpt'],
  ['chatgpt', 'chatgpt'],
  ['openai', 'chatgpt'],
  ['perplexity', 'perplexity'],
  ['perplexity.ai', 'perplexity'],
  ['copilot', 'copilot'],
  ['gemini', 'gemini'],
  ['claude', 'claude'],
  ['claude.ai', 'claude'],
]);

/** AI crawlers and agents by user-agent token (case-insensitive substring). Order: more specific first. */
const AI_CRAWLERS: readonly [string, string][] = [
  ['oai-searchbot', 'OAI-SearchBot'],
  ['chatgpt-user', 'ChatGPT-User'],
  ['gptbot', 'GPTBot'],
  ['claude-searchbot', 'Claude-SearchBot'],
  ['claude-user', 'Claude-User'],
  ['claude-web', 'Claude-Web'],
  ['claudebot', 'ClaudeBot'],
  ['anthropic-ai', 'anthropic-ai'],
  ['perplexity-user', 'Perplexity-User'],
  ['perplexitybot', 'PerplexityBot'],
  ['google-extended', 'Google-Extended'],
  ['googleother', 'GoogleOther'],
  ['google-cloudvertexbot', 'Google-CloudVertexBot'],
  ['applebot-extended', 'Applebot-Extended'],
  ['bytespider', 'Bytespider'],
  ['ccbot', 'CCBot'],
  ['amazonbot', 'Amazonbot'],
  ['meta-externalagent', 'meta-externalagent'],
  ['meta-externalfetcher', 'meta-externalfetcher'],
  ['facebookbot', 'FacebookBot'],
  ['cohere-ai', 'cohere-ai'],
  ['duckassistbot', 'DuckAssistBot'],
  ['mistralai-user', 'MistralAI-User'],
  ['youbot', 'YouBot'],
  ['diffbot', 'Diffbot'],
  ['timpibot', 'Timpibot'],
  ['ai2bot', 'AI2Bot'],
];

/** The AI engine a referrer host or landing URL's `utm_source` points to, else null. */
export function classifyReferral(referrerHost: string | null, utmSource: string | null): string | null {
  if (referrerHost) {
    const host = referrerHost.toLowerCase();
    for (const [suffix, engine] of AI_REFERRERS) {
      if (host === suffix || host.endsWith(`.${suffix}`)) return engine;
    }
    if ((host === 'bing.com' || host === 'www.bing.com') && utmSource === null) return null;
  }
  if (utmSource) return AI_UTM_SOURCES.get(utmSource.toLowerCase()) ?? null;
  return null;
}

/** The AI crawler a user agent names, else null. */
export function classifyCrawler(userAgent: string | undefined): string | null {
  if (!userAgent) return null;
  const ua = userAgent.toLowerCase();
  for (const [token, name] of AI_CRAWLERS) if (ua.includes(token)) return name;
  return null;
}
