// PROMPT_INJECTION: phrases that try to override an assistant's instructions, in several languages. Each rule is
// keyed by its first word, so the scanner only runs a (sticky, bounded, backtracking-safe) regex when that word
// appears.
import { hashWord } from './chars.ts';
import { evidence, type ScanState } from './scan-state.ts';

interface InjectionRule {
  readonly re: RegExp;
  /** Strong phrases block; weak ones are masked. */
  readonly strong: boolean;
}

const S = '[ \\t]+';
const ANY_DET = `(?:(?:all|any|every|each|the|your|my|of|these|those|prior|previous)${S}){0,3}`;
const PRIOR = '(?:previous|prior|above|earlier|preceding|former|original|initial|existing|system|old|current)';
const RULES_WORD =
  '(?:instructions?|prompts?|rules?|directions?|guidelines?|directives?|commands?|context|messages?|constraints?|restrictions?|guardrails?|polic(?:y|ies)|programming|training)';

function rule(src: string, strong: boolean): InjectionRule {
  return { re: new RegExp(src, 'iy'), strong };
}

const OVERRIDE_EN = rule(`[a-z]+${S}${ANY_DET}${PRIOR}${S}(?:[a-z]+${S}){0,2}?${RULES_WORD}\\b`, true);
const FORGET_EN = rule(
  `(?:forget|ignore|disregard)${S}(?:everything|all)${S}(?:(?:you|that)${S}(?:were|was|have been)${S}told|above|before|so far)\\b`,
  true,
);
const YOU_ARE_NOW = rule(
  `you(?:${S}are|'re)${S}now${S}(?:(?:a|an|in|the)${S})?(?:DAN|jailbroken|unrestricted|unfiltered|uncensored|developer${S}mode|evil|free${S}(?:of|from)${S}(?:all${S})?(?:rules|restrictions))\\b`,
  true,
);
const REVEAL_EN = rule(
  `[a-z]+(?:${S}me)?${S}(?:your|the)${S}(?:(?:full|entire|original|hidden|secret|initial|exact|complete)${S})*(?:system${S}(?:prompt|message|instructions)|initial${S}instructions|hidden${S}instructions|instructions${S}above|developer${S}message)\\b`,
  true,
);
const ASK_SYSTEM_PROMPT = rule(
  `what(?:'s|${S}is|${S}are|${S}was)${S}(?:your|the)${S}(?:(?:full|original|hidden|exact)${S})?(?:system${S}prompt|initial${S}instructions|hidden${S}instructions)\\b`,
  false,
);
const DO_ANYTHING_NOW = rule(`do${S}anything${S}now\\b`, true);
const DEV_MODE = rule(`(?:enable|activate|enter)${S}(?:developer|god|dan|jailbreak|unrestricted)${S}mode\\b`, true);
const DEV_MODE_ON = rule(`developer${S}mode${S}(?:enabled|activated|on)\\b`, true);
const ACT_AS = rule(
  `(?:act${S}as|pretend${S}(?:to${S}be|you${S}are)|roleplay${S}as)${S}(?:(?:an?|the)${S})?(?:unrestricted|unfiltered|uncensored|evil|jailbroken|DAN|an${S}AI${S}without)\\b`,
  true,
);
const JAILBREAK = rule('jailbreak(?:ing|en)?\\b', false);
const NEW_INSTRUCTIONS = rule(`(?:new|updated|real)${S}(?:system${S})?instructions?[ \\t]*:`, false);
const OVERRIDE_WEAK = rule(`(?:ignore|disregard)${S}(?:the${S})?(?:above|previous|everything)\\b`, false);

// Spanish, Portuguese, Italian, French, German, Dutch.
const ES_PT_IT = rule(
  `[a-zçé]+${S}(?:(?:todas?|tutte|le|las|los|as|os|tus|tuas|suas|sus|i|gli)${S}){0,3}(?:instrucciones|instruções|instrucoes|istruzioni|indicaciones|regras|reglas|regole|órdenes)${S}(?:anteriores|previas|prévias|precedenti|previe)\\b`,
  true,
);
const FR = rule(
  `[a-zé]+${S}(?:(?:toutes|tous|les|tes|vos|des)${S}){0,3}(?:instructions|consignes|règles|regles)${S}(?:précédentes|precedentes|antérieures|anterieures|ci-dessus)\\b`,
  true,
);
const DE = rule(
  `[a-zä]+(?:${S}sie)?${S}(?:(?:alle|die|deine|ihre)${S}){0,2}(?:vorherigen|bisherigen|obigen|vorigen|früheren|ursprünglichen)${S}(?:Anweisungen|Instruktionen|Regeln|Befehle|Vorgaben)\\b`,
  true,
);
const NL = rule(
  `[a-z]+${S}(?:(?:alle|de|je)${S}){0,2}(?:vorige|eerdere|voorgaande|bovenstaande)${S}(?:instructies|regels|opdrachten)\\b`,
  true,
);
const REVEAL_ROMANCE = rule(
  `[a-zéè]+(?:${S}(?:me|moi|mir))?${S}(?:tu|el|ton|votre|le|il|deinen|den|o|seu)${S}(?:prompt|mensaje|message|messaggio|System-?prompt|Systemprompt)(?:${S}(?:del|de|du|di)${S}(?:sistema|système|systeme))?\\b`,
  true,
);
const NOW_YOU_ARE = rule(
  `(?:ahora${S}eres|tu${S}es${S}maintenant|du${S}bist${S}jetzt|agora${S}você${S}é|ora${S}sei|je${S}bent${S}nu)${S}(?:DAN|libre|frei|livre|libero|vrij)\\b`,
  true,
);

const OVERRIDE_VERBS = ['ignore', 'disregard', 'forget', 'override', 'bypass', 'skip', 'drop', 'discard', 'abandon'];
const REVEAL_VERBS = [
  'reveal',
  'show',
  'print',
  'display',
  'output',
  'repeat',
  'leak',
  'dump',
  'expose',
  'tell',
  'give',
  'share',
  'write',
];

const RULES_BY_WORD = new Map<number, readonly InjectionRule[]>();
const TRIGGER_WORDS: string[] = [];

function addRules(words: readonly string[], rules: readonly InjectionRule[]): void {
  for (const w of words) {
    TRIGGER_WORDS.push(w);
    const h = hashWord(w);
    RULES_BY_WORD.set(h, [...(RULES_BY_WORD.get(h) ?? []), ...rules]);
  }
}

addRules(OVERRIDE_VERBS, [OVERRIDE_EN, FORGET_EN, OVERRIDE_WEAK]);
addRules(REVEAL_VERBS, [REVEAL_EN]);
addRules(['you'], [YOU_ARE_NOW]);
addRules(['do'], [DO_ANYTHING_NOW]);
addRules(['what'], [ASK_SYSTEM_PROMPT]);
addRules(['enable', 'activate', 'enter'], [DEV_MODE]);
addRules(['developer'], [DEV_MODE_ON]);
addRules(['act', 'pretend', 'roleplay'], [ACT_AS]);
addRules(['jailbreak', 'jailbreaking', 'jailbroken', 'jailbreaken'], [JAILBREAK]);
addRules(['new', 'updated', 'real'], [NEW_INSTRUCTIONS]);
addRules(['ignora', 'olvida', 'omite', 'descarta', 'ignore', 'esqueça', 'esqueca', 'dimentica', 'ignorar'], [ES_PT_IT]);
addRules(['ignore', 'ignorez', 'oublie', 'oubliez'], [FR]);
addRules(['ignoriere', 'ignorieren', 'vergiss', 'vergessen', 'missachte'], [DE]);
addRules(['negeer', 'vergeet'], [NL]);
addRules(
  ['revela', 'révèle', 'revele', 'révélez', 'zeige', 'zeig', 'verrate', 'mostra', 'muestra', 'affiche', 'montre'],
  [REVEAL_ROMANCE],
);
addRules(['ahora', 'tu', 'du', 'agora', 'ora', 'je'], [NOW_YOU_ARE]);

/** The words that may start an injection phrase. */
export function injectionTriggerWords(): readonly string[] {
  return TRIGGER_WORDS;
}

/** Hashes (chars.hashWord) of the words that may start an injection phrase. */
export function injectionTriggerHashes(): number[] {
  return [...RULES_BY_WORD.keys()];
}

/** Tries the injection rules of the word starting at `s`. Emits and returns the phrase end, or -1. */
export function scanInjection(st: ScanState, s: number, hash: number): number {
  const rules = RULES_BY_WORD.get(hash);
  if (rules === undefined || !st.sel.injection) return -1;
  for (const r of rules) {
    r.re.lastIndex = s;
    if (r.re.test(st.text)) {
      const end = r.re.lastIndex;
      st.emit(
        'PROMPT_INJECTION',
        s,
        end,
        evidence({ valid: true, context: r.strong ? 1 : 0, strength: r.strong ? 1 : 0.3 }),
        r.strong ? 0 : -0.3,
      );
      return end;
    }
  }
  return -1;
}
