// `akas calibration init DIR`: a private calibration set (calibration-set.ts) drawn fresh from
// generators, so that no answer of it ships in any package. Every question and challenge is a
// template filled with values drawn at random (words, names, numbers, places), its answer
// computed from what was drawn:
//
// - calibration pools A and B: two exact questions (letters counted, a shop's bill, the next
//   number of a sequence, minutes, weekdays), two answered in text and scored by similarity
//   (past tenses, capitals, plurals, chemical symbols, opposites) and one JSON extraction,
//   each pool drawn on its own;
// - a challenge bank of categorize, synonyms, extract and tool-description entries, about one
//   in ten of the short-text ones a decoy. Decoys and ordinary entries come from the same
//   generators, so nothing in a prompt tells them apart: an agent must answer every challenge
//   as if it counted.
//
// What this buys, and what it does not: nothing of a generated set can be looked up in the
// package, but the templates can (this file is public), so a program written for them could
// answer the questions without any intelligence. An operator who wants calibration to measure
// more replaces or adds questions of their own: the files are plain JSON in the formats of
// data/ (the README written beside them says how).
import type { RandomSource } from '../../core/index.js';
import type { Question } from './scoring.js';
import type { ChallengeEntry } from './bank.js';
import { pairsOf, WORDS, GOODS, DAYS, MONTHS, PAST, CAPITALS, PLURALS, ELEMENTS, OPPOSITES, PEOPLE, CURRENCIES, ITEMS, CITIES, TOPICS } from './vocabulary.js';

const uint = (r: RandomSource, max: number) => r(4).readUInt32BE(0) % max;
const pick = <T>(r: RandomSource, xs: readonly T[]): T => xs[uint(r, xs.length)];
const between = (r: RandomSource, lo: number, hi: number) => lo + uint(r, hi - lo + 1);
function sample<T>(r: RandomSource, xs: readonly T[], n: number): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = uint(r, i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a.slice(0, n);
}

// ---- calibration questions ------------------------------------------------------------------

const SYSTEM = {
  exact: 'You are being calibrated. Answer precisely and follow the requested output format exactly, with nothing before or after the answer.',
  cosine: 'You are being calibrated. Answer precisely and concisely, in plain text without Markdown.',
  'schema-cosine': 'You are being calibrated. Reply with a single JSON object and nothing else.',
} as const;

type Draft = Omit<Question, 'id' | 'systemPrompt'>;
const listOf = (r: RandomSource, pairs: Array<[string, string]>, n: number) => sample(r, pairs, n);

const EXACT: Array<(r: RandomSource) => Draft> = [
  (r) => {
    const word = pick(r, WORDS);
    const letters = [...new Set(word)];
    const repeated = letters.filter((l) => word.split(l).length > 2);
    const letter = pick(r, repeated.length ? repeated : letters);
    return {
      scoring: 'exact',
      maxAnswerLen: 20,
      expected: String(word.split(letter).length - 1),
      userPrompt: `How many times does the letter "${letter}" appear in the word "${word}"? Reply with the digit only.`,
    };
  },
  (r) => {
    const [[, many], [, many2]] = sample(r, GOODS, 2);
    const [a, b] = [between(r, 3, 19) * 5, between(r, 3, 19) * 5];
    const [n, m] = [between(r, 2, 9), between(r, 2, 9)];
    return {
      scoring: 'exact',
      maxAnswerLen: 20,
      expected: String(a * n + b * m),
      userPrompt:
        `A shop sells ${many} at ${a} cents each and ${many2} at ${b} cents each. How many cents do ${n} ${many} and ${m} ${many2}` +
        ` cost together? Reply with the integer only.`,
    };
  },
  (r) => {
    const [k, c] = [between(r, 1, 6), between(r, 1, 9)];
    const s = (i: number) => i * (i + k) + c;
    return {
      scoring: 'exact',
      maxAnswerLen: 20,
      expected: String(s(6)),
      userPrompt: `What is the next number in the sequence ${[1, 2, 3, 4, 5].map(s).join(', ')}, ...? Reply with the number only.`,
    };
  },
  (r) => {
    const [h, m] = [between(r, 2, 11), between(r, 1, 11) * 5];
    return {
      scoring: 'exact',
      maxAnswerLen: 20,
      expected: String(h * 60 + m),
      userPrompt: `How many minutes are there in ${h} hours and ${m} minutes? Reply with the integer only.`,
    };
  },
  (r) => {
    const start = uint(r, 7);
    let n = between(r, 3, 45);
    if (n % 7 === 0) n += 1;
    return {
      scoring: 'exact',
      maxAnswerLen: 20,
      expected: DAYS[(start + n) % 7],
      userPrompt: `If today is ${DAYS[start]}, what day of the week will it be in ${n} days? Reply with the day's name only.`,
    };
  },
];

const COSINE: Array<(r: RandomSource) => Draft> = [
  (r) => {
    const v = listOf(r, PAST, 6);
    return {
      scoring: 'cosine',
      maxAnswerLen: 200,
      expected: v.map(([, p]) => p).join(', '),
      userPrompt: `Give the simple past tense of each of these English verbs, in the same order, separated by commas: ${v.map(([x]) => x).join(', ')}.`,
    };
  },
  (r) => {
    const c = listOf(r, CAPITALS, 4);
    return {
      scoring: 'cosine',
      maxAnswerLen: 200,
      expected: c.map(([, x]) => x).join(', '),
      userPrompt: `Name the capital city of each of these countries, in the same order, separated by commas: ${c.map(([x]) => x).join(', ')}.`,
    };
  },
  (r) => {
    const p = listOf(r, PLURALS, 6);
    return {
      scoring: 'cosine',
      maxAnswerLen: 200,
      expected: p.map(([, x]) => x).join(', '),
      userPrompt: `Give the plural of each of these English nouns, in the same order, separated by commas: ${p.map(([x]) => x).join(', ')}.`,
    };
  },
  (r) => {
    const e = listOf(r, ELEMENTS, 5);
    return {
      scoring: 'cosine',
      maxAnswerLen: 120,
      expected: e.map(([, x]) => x).join(', '),
      userPrompt: `Give the chemical symbol of each of these elements, in the same order, separated by commas: ${e.map(([x]) => x).join(', ')}.`,
    };
  },
  (r) => {
    const o = listOf(r, OPPOSITES, 5);
    return {
      scoring: 'cosine',
      maxAnswerLen: 200,
      expected: o.map(([, x]) => x).join(', '),
      userPrompt: `Give the opposite of each of these English words, in the same order, separated by commas: ${o.map(([x]) => x).join(', ')}.`,
    };
  },
];

const str = { type: 'string', minLength: 1 };
const SCHEMA: Array<(r: RandomSource) => Draft> = [
  (r) => {
    const [payer, payee] = sample(r, PEOPLE, 2);
    const [currencyName, code] = pick(r, CURRENCIES);
    const amount = between(r, 4, 180) * 5;
    const item = pick(r, ITEMS);
    const sentence = `On ${between(r, 1, 28)} ${pick(r, MONTHS)}, ${payer} paid ${amount} ${currencyName} to ${payee} for a ${item}.`;
    return {
      scoring: 'schema-cosine',
      maxAnswerLen: 400,
      userPrompt:
        `From the sentence "${sentence}" extract who paid, who was paid, the amount, the ISO 4217 currency code and the item. ` +
        `Reply with a JSON object with exactly the keys "payer", "payee", "amount" (a number), "currency" and "item".`,
      expected: JSON.stringify({ payer, payee, amount, currency: code, item }),
      schema: {
        type: 'object',
        required: ['payer', 'payee', 'amount', 'currency', 'item'],
        properties: { payer: str, payee: str, amount: { type: 'number' }, currency: str, item: str },
        additionalProperties: false,
      },
    };
  },
  (r) => {
    const [organizer, guest] = sample(r, PEOPLE, 2);
    const [city, day, topic] = [pick(r, CITIES), pick(r, DAYS), pick(r, TOPICS)];
    const time = `${String(between(r, 8, 17)).padStart(2, '0')}:${pick(r, ['00', '15', '30', '45'])}`;
    const sentence = `${organizer} will meet ${guest} in ${city} on ${day} at ${time} to review the ${topic}.`;
    return {
      scoring: 'schema-cosine',
      maxAnswerLen: 400,
      userPrompt:
        `From the sentence "${sentence}" extract who set up the meeting, who is invited, the city, the day and the time. Reply ` +
        `with a JSON object with exactly the keys "organizer", "guest", "city", "day" and "time" (HH:MM).`,
      expected: JSON.stringify({ organizer, guest, city, day, time }),
      schema: {
        type: 'object',
        required: ['organizer', 'guest', 'city', 'day', 'time'],
        properties: { organizer: str, guest: str, city: str, day: str, time: str },
        additionalProperties: false,
      },
    };
  },
];

/** Five fresh questions for one pool: two exact, two in text, one JSON extraction. */
export function generatePool(r: RandomSource, pool: 'A' | 'B'): Question[] {
  const drafts = [...sample(r, EXACT, 2).map((g) => g(r)), ...sample(r, COSINE, 2).map((g) => g(r)), pick(r, SCHEMA)(r)];
  return drafts.map((d, i) => ({ id: `${pool}${i + 1}`, systemPrompt: SYSTEM[d.scoring], ...d }));
}

// ---- the challenge bank ---------------------------------------------------------------------

const SHORT_SYSTEM =
  'You are answering a work challenge for an agent knowledge service. Reply with one JSON object of the form {"answer": "<text>"} and nothing else.';
const TOOL_SYSTEM =
  'You write concise, accurate product copy for developer tools. Reply with one JSON object and nothing else: {"answer": the paragraph ' +
  '(50-600 characters), "confidence": "low" | "medium" | "high", "model": {"family": "claude" | "gpt" | "gemini" | "llama" | "qwen" | ' +
  '"mistral" | "other", "version": "<your model version>"}, "via": "anthropic-api" | "openai-api" | "google-api" | "local" | "browser" ' +
  '| "other", "elapsed_ms": integer milliseconds you spent, "reasoning": optional, at most 280 characters}.';

/** A short-text challenge with the answer a decoy would accept (and the ones it rejects). */
interface Drawn {
  category: 'categorize' | 'synonyms' | 'extract';
  userPrompt: string;
  accept: string[];
  reject?: string[];
}

const classify = (kind: string, options: string[], text: string) =>
  `Classify the following ${kind} into exactly one of these categories: ${options.join(', ')}. Reply with the category name only.\n\n` +
  `${kind[0].toUpperCase()}${kind.slice(1)}: "${text}"`;

const HEADLINES: Record<string, Array<(r: RandomSource) => string>> = {
  sports: [
    (r) => `${pick(r, CITIES)} United beat ${pick(r, CITIES)} Rovers ${between(r, 2, 5)}-${between(r, 0, 1)} on ${pick(r, DAYS)} to reach the cup final.`,
    (r) => `${pick(r, PEOPLE)} set a national record in the ${pick(r, ['100', '400', '1500', '5000'])} metres at the championships in ${pick(r, CITIES)}.`,
  ],
  politics: [
    (r) => `The parliament passed next year's budget after a ${between(r, 9, 30)}-hour debate, with ${between(r, 160, 220)} members voting in favour.`,
    (r) => `The prime minister called an early general election for ${pick(r, MONTHS)} after the coalition partners failed to agree on tax reform.`,
  ],
  technology: [
    (r) =>
      `A new open-source database engine promises ${between(r, 2, 9) * 10} percent faster queries on the same hardware, its developers said ` +
      `in ${pick(r, CITIES)}.`,
    (r) =>
      `The smartphone maker released a software update that fixes a security flaw in its ${pick(r, [
        'camera app',
        'web browser',
        'messaging ' + 'app',
        'wireless driver',
      ])}.`,
  ],
  weather: [
    (r) =>
      `Heavy ${pick(r, ['snow', 'rain'])} and strong winds are expected across the ` +
      `${pick(r, ['northern', 'southern', 'coastal', 'eastern'])} region ${pick(r, ['tonight', 'tomorrow', 'this weekend'])}, with ` +
      `flooding possible on low roads.`,
    (r) => `Temperatures in ${pick(r, CITIES)} will climb to ${between(r, 33, 41)} degrees on ${pick(r, DAYS)}, the hottest day of the year so far.`,
  ],
};
const TICKETS: Record<string, Array<(r: RandomSource) => string>> = {
  'bug report': [
    (r) =>
      `Clicking ${pick(r, ['export', 'save', 'upload', 'print'])} does nothing once a table passes ${between(r, 2, 9) * 1000} rows, and the ` +
      `console logs an error.`,
    (r) => `The app crashes every time I open the ${pick(r, ['settings', 'reports', 'billing', 'calendar'])} page on my phone.`,
  ],
  'feature request': [
    (r) => `Could the dashboard e-mail a ${pick(r, ['weekly', 'daily', 'monthly'])} summary of the numbers to everyone on my team?`,
    (r) => `Please add a dark mode to the ${pick(r, ['editor', 'dashboard', 'mobile app'])}; I work late and the white screen is tiring.`,
  ],
  question: [(r) => `How do I change the ${pick(r, ['billing address', 'time zone', 'default language', 'notification email'])} of my account?`],
  praise: [(r) => `The new ${pick(r, ['search', 'editor', 'calendar', 'import tool'])} is wonderful: it saved our team hours this week. Thank you!`],
};
const REVIEWS: Record<string, Array<(r: RandomSource) => string>> = {
  positive: [
    (r) =>
      `I absolutely love this ${pick(r, ['kettle', 'backpack', 'lamp', 'blender', 'desk chair'])}: it works perfectly, looks great, and was worth every penny!`,
  ],
  negative: [
    (r) =>
      `This ${pick(r, ['kettle', 'backpack', 'lamp', 'blender', 'desk chair'])} broke after ${between(r, 2, 9)} days and support never ` +
      `answered my emails. Avoid it.`,
  ],
  neutral: [
    (r) =>
      `The ${pick(r, ['kettle', 'backpack', 'lamp', 'blender', 'desk chair'])} arrived on ${pick(r, DAYS)}. It is grey and weighs ` +
      `${between(r, 4, 19) * 100} grams.`,
  ],
  mixed: [
    (r) =>
      `The ${pick(r, ['kettle', 'backpack', 'lamp', 'blender', 'desk chair'])} looks great and is well made, but it is far too loud and the handle gets hot.`,
  ],
};
const CODE: Record<string, (f: string, op: string) => string> = {
  python: (f, op) => `def ${f}(a, b):\n    return a ${op} b`,
  javascript: (f, op) => `function ${f}(a, b) {\n  return a ${op} b;\n}`,
  rust: (f, op) => `fn ${f}(a: i32, b: i32) -> i32 {\n    a ${op} b\n}`,
  go: (f, op) => `func ${f}(a int, b int) int {\n\treturn a ${op} b\n}`,
};
const CODE_NAME: Record<string, string> = { python: 'Python', javascript: 'JavaScript', rust: 'Rust', go: 'Go' };

const SYNONYMS: Record<string, { accept: string[]; reject: string[]; sentences: string[] }> = {
  happy: {
    accept: ['glad', 'joyful', 'cheerful', 'pleased', 'delighted', 'content', 'thrilled', 'elated', 'merry', 'jolly', 'upbeat', 'satisfied'],
    reject: ['sad', 'unhappy', 'miserable', 'angry'],
    sentences: ['He was happy that the build finally went green.', 'The team was happy with the new release.'],
  },
  fast: {
    accept: ['quick', 'rapid', 'speedy', 'swift', 'brisk', 'hasty', 'nimble', 'snappy', 'prompt', 'high-speed'],
    reject: ['slow', 'sluggish'],
    sentences: ['The new query planner is remarkably fast.', 'Their delivery service is fast and cheap.'],
  },
  big: {
    accept: ['large', 'huge', 'enormous', 'vast', 'massive', 'giant', 'sizable', 'substantial', 'immense', 'great'],
    reject: ['small', 'tiny', 'little'],
    sentences: ['They moved into a big office downtown.', 'The migration was a big project.'],
  },
  smart: {
    accept: ['clever', 'intelligent', 'bright', 'brilliant', 'sharp', 'wise', 'astute', 'shrewd', 'gifted'],
    reject: ['stupid', 'dumb', 'foolish'],
    sentences: ['She is a smart engineer who spots bugs quickly.', 'That was a smart way to cut the costs.'],
  },
  angry: {
    accept: ['furious', 'mad', 'irate', 'annoyed', 'irritated', 'livid', 'enraged', 'cross', 'upset', 'outraged'],
    reject: ['calm', 'happy', 'pleased'],
    sentences: ['The customer was angry about the late delivery.', 'He sounded angry on the phone.'],
  },
  tired: {
    accept: ['exhausted', 'weary', 'sleepy', 'drained', 'fatigued', 'worn out', 'spent', 'drowsy'],
    reject: ['energetic', 'rested', 'lively'],
    sentences: ['After the night shift she was tired.', 'The tired hikers stopped at the hut.'],
  },
  small: {
    accept: ['little', 'tiny', 'minor', 'compact', 'miniature', 'petite', 'slight', 'modest', 'minute'],
    reject: ['big', 'large', 'huge'],
    sentences: ['They rented a small apartment near the station.', 'It was a small change to the config file.'],
  },
  difficult: {
    accept: ['hard', 'tough', 'challenging', 'demanding', 'tricky', 'complicated', 'arduous', 'complex'],
    reject: ['easy', 'simple'],
    sentences: ['The exam was more difficult than expected.', 'Debugging the race condition was difficult.'],
  },
  beautiful: {
    accept: ['lovely', 'pretty', 'gorgeous', 'stunning', 'attractive', 'handsome', 'elegant', 'exquisite', 'charming'],
    reject: ['ugly', 'hideous'],
    sentences: ['They walked along a beautiful beach at sunset.', 'The garden looks beautiful in spring.'],
  },
  quiet: {
    accept: ['silent', 'calm', 'peaceful', 'still', 'hushed', 'soft', 'tranquil', 'muted'],
    reject: ['loud', 'noisy'],
    sentences: ['The library is quiet in the morning.', 'He found a quiet room to work in.'],
  },
  begin: {
    accept: ['start', 'commence', 'initiate', 'launch', 'open', 'kick off', 'embark'],
    reject: ['end', 'finish', 'stop'],
    sentences: ['The meeting will begin at nine.', 'We begin the rollout next week.'],
  },
  brave: {
    accept: ['courageous', 'bold', 'fearless', 'heroic', 'daring', 'valiant', 'gallant', 'intrepid'],
    reject: ['cowardly', 'afraid', 'timid'],
    sentences: ['The brave firefighter entered the building.', 'It was a brave decision to rewrite the system.'],
  },
};

const EXTRACT: Array<(r: RandomSource) => Drawn> = [
  (r) => {
    const [first, last] = pick(r, PEOPLE).toLowerCase().split(' ');
    const email = `${first}.${last}@${pick(r, ['example.org', 'example.com', 'example.net'])}`;
    return {
      category: 'extract',
      accept: [email],
      userPrompt:
        `Extract the email address from the text below. Reply with them separated by commas, in order of appearance.\n\nText: ` +
        `"For ${pick(r, ['access requests', 'billing questions', 'press enquiries', 'refunds'])}, write to ${email} and include your order number."`,
    };
  },
  (r) => {
    const year = String(between(r, 1850, 2015));
    return {
      category: 'extract',
      accept: [year],
      userPrompt:
        `Extract the year from the text below. Reply with them separated by commas, in order of appearance.\n\nText: "The ` +
        `${pick(r, ['old', 'new', 'great', 'north'])} bridge of ${pick(r, CITIES)} opened to traffic in ${year} after ${between(r, 2, 9)} ` +
        `years of construction."`,
    };
  },
  (r) => {
    const code = String(pick(r, [404, 429, 503, 500, 401, 403, 301, 502]));
    return {
      category: 'extract',
      accept: [code],
      userPrompt:
        `Extract the HTTP status code from the text below. Reply with them separated by commas, in order of appearance.\n\nText: ` +
        `"The client kept retrying although the server answered ${code} for ${between(r, 2, 59)} minutes during the ` +
        `${pick(r, ['deployment', 'migration', 'sale', 'outage'])}."`,
    };
  },
  (r) => {
    const order = `${pick(r, ['A', 'B', 'K', 'Q', 'Z'])}-${between(r, 10000, 99999)}`;
    return {
      category: 'extract',
      accept: [order],
      userPrompt:
        `Extract the order number from the text below. Reply with them separated by commas, in order of appearance.\n\nText: ` +
        `"Order ${order} was shipped from ${pick(r, CITIES)} on ${pick(r, DAYS)} and should arrive within ${between(r, 2, 6)} days."`,
    };
  },
];

function categorize(r: RandomSource): Drawn {
  const family = uint(r, 4);
  const from = (table: Record<string, Array<(r: RandomSource) => string>>, kind: string, clear: string[]) => {
    const label = pick(r, clear);
    const options = Object.keys(table);
    return {
      category: 'categorize' as const,
      userPrompt: classify(kind, options, pick(r, table[label])(r)),
      accept: [label],
      reject: options.filter((o) => o !== label),
    };
  };
  if (family === 0) return from(HEADLINES, 'headline', Object.keys(HEADLINES));
  if (family === 1) return from(TICKETS, 'support ticket', Object.keys(TICKETS));
  if (family === 2) return from(REVIEWS, 'product review', Object.keys(REVIEWS));
  const lang = pick(r, Object.keys(CODE));
  const f = pick(r, ['combine', 'total', 'merge_values', 'apply_op', 'calc', 'pair_sum']);
  const text = CODE[lang](f, pick(r, ['+', '-', '*']));
  return {
    category: 'categorize',
    userPrompt: classify('code snippet', Object.values(CODE_NAME), text),
    accept: lang === 'go' ? ['go', 'golang'] : [lang],
    reject: Object.keys(CODE)
      .filter((l) => l !== lang)
      .map((l) => (l === 'go' ? 'golang' : l)),
  };
}

function synonyms(r: RandomSource): Drawn {
  const word = pick(r, Object.keys(SYNONYMS));
  const s = SYNONYMS[word];
  return {
    category: 'synonyms',
    accept: s.accept,
    reject: s.reject,
    userPrompt: `Give three synonyms for the word "${word}" as it is used in this sentence, separated by commas: "${pick(r, s.sentences)}"`,
  };
}

const TOOLS = pairsOf(
  'ripgrep:a command-line search tool that recursively searches directories for a regex pattern while respecting .gitignore,jq:a ' +
    'command-line JSON processor for slicing; filtering; mapping and transforming structured data,curl:a command-line tool and library for ' +
    'transferring data with URLs over many protocols,' +
    'htop:an interactive process viewer for the terminal,fzf:a general-purpose command-line fuzzy finder,tmux:a terminal multiplexer that ' +
    'keeps sessions running after you disconnect,sqlite3:the command-line shell of an embedded SQL database stored in one file,' +
    'ffmpeg:a command-line tool to record; convert and stream audio and video,rsync:a fast tool to copy and synchronise files locally or ' +
    'over SSH,git bisect:a git command that finds the commit that introduced a bug by binary search,' +
    'shellcheck:a static analysis tool that finds bugs in shell scripts,hyperfine:a command-line benchmarking tool,bat:a cat clone with ' +
    'syntax highlighting and git integration,fd:a simple and fast alternative to find,' +
    'httpie:a human-friendly command-line HTTP client,entr:a tool that runs a command whenever files change,direnv:a shell extension that ' +
    'loads environment variables per directory,age:a simple file encryption tool with small explicit keys,' +
    'mkcert:a tool that makes locally trusted development certificates,watchexec:a tool that runs commands when files are modified,yq:a ' +
    'command-line YAML; JSON and XML processor,tokei:a tool that counts lines of code by language',
).map(([name, what]) => [name, what.replace(/;/g, ',')] as [string, string]);

/**
 * A fresh challenge bank of about `entries` entries (categorize, synonyms, extract, and the
 * tool descriptions there are), about `decoyShare` of the short-text ones decoys. Prompts are
 * unique; decoys and ordinary entries come from the same generators.
 */
export function generateBank(r: RandomSource, entries = 300, decoyShare = 0.1): ChallengeEntry[] {
  const tools = sample(r, TOOLS, Math.min(TOOLS.length, Math.round(entries / 6)));
  const shortCount = entries - tools.length;
  const seen = new Set<string>();
  const drawn: Drawn[] = [];
  const makers = [categorize, categorize, synonyms, (x: RandomSource) => pick(x, EXTRACT)(x)];
  for (let tries = 0; drawn.length < shortCount && tries < shortCount * 50; tries++) {
    const d = pick(r, makers)(r);
    if (seen.has(d.userPrompt)) continue;
    seen.add(d.userPrompt);
    drawn.push(d);
  }
  const decoys = new Set(
    sample(
      r,
      drawn.map((_, i) => i),
      Math.max(1, Math.round(drawn.length * decoyShare)),
    ),
  );
  const counters: Record<string, number> = {};
  const idOf = (category: string) => `${category.slice(0, 3)}-${String((counters[category] = (counters[category] ?? 0) + 1)).padStart(3, '0')}`;
  const short: ChallengeEntry[] = drawn.map((d, i) => ({
    id: idOf(d.category),
    category: d.category,
    systemPrompt: SHORT_SYSTEM,
    userPrompt: d.userPrompt,
    schemaName: 'short-text',
    ...(decoys.has(i) ? { decoy: { accept: d.accept, ...(d.reject?.length ? { reject: d.reject } : {}) } } : {}),
  }));
  const described: ChallengeEntry[] = tools.map(([name, what]) => ({
    id: idOf('tool-description'),
    category: 'tool-description',
    systemPrompt: TOOL_SYSTEM,
    userPrompt:
      `Write a 40-60 word landing paragraph for the tool "${name}": ${what}. Write for a developer meeting it for the first time: ` +
      `what it does, when it helps, and no claims you cannot back up.`,
    schemaName: 'tool-description',
  }));
  // Shuffled together: the order of the file tells nothing either.
  return sample(r, [...short, ...described], short.length + described.length);
}

/** The three files of a fresh private calibration set (calibration-set.ts), as JSON values. */
export function generateCalibrationSet(r: RandomSource, opts: { entries?: number } = {}) {
  const note =
    "A private calibration set made by akas calibration init: fresh instances of public templates. Keep it readable by the node's user " +
    'only; edit, replace or add entries as you like (same formats as data/ in the akas package).';
  return {
    'pool-A.json': { pool: 'A', note, questions: generatePool(r, 'A') },
    'pool-B.json': { pool: 'B', note, questions: generatePool(r, 'B') },
    'bank.json': { note: `${note} decoy.accept is what a decoy accepts: never publish it.`, challenges: generateBank(r, opts.entries ?? 300) },
  };
}
