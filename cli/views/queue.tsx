// The judge queue on a terminal (ink): pending proposals in a list, arrow keys to move,
// enter to judge one. Judging asks for the four scores and a rationale, shows the composite,
// and on confirmation signs locally and sends (through the `judge` callback the command
// passes in, which uses cli/commands/proposals/judge-signing.ts, so the bytes signed are those of `akas judge`).
// Loaded with a dynamic import, and only when stdout is a terminal and --json is off.
import { Spinner, StatusMessage } from '@inkjs/ui';
import { Box, render, Text, useApp, useInput, useStdout } from 'ink';
import { useRef, useState } from 'react';
import { parseScore, rationaleProblem, RATIONALE_MAX, SCORE_NAMES, type Scores } from '../commands/proposals/judge-input.js';
import type { JudgmentInput } from '../commands/proposals/judge-signing.js';
import { LineInput, splitLines, YesNo } from './line-input.js';
import { type Json, terminalSafe, terminalSafeDeep } from '../kit/index.js';

/** One item of GET /api/judge/queue?expand=1. */
export interface QueueItem {
  proposalId: string;
  kind: string;
  title: string;
  path: string | null;
  submittedAt: number;
  judgmentCount: number;
  requiredJudgments: number;
  proposal?: Json;
}

export interface JudgedEntry {
  proposalId: string;
  judgmentId: string | null;
  newStatus: string;
}

export interface QueueViewOptions {
  stdout: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
  items: QueueItem[];
  nextCursor?: string | null;
  agentTag: string;
  /** Signs and sends one judgment; rejects with an Error whose message is shown. */
  judge: (input: JudgmentInput) => Promise<Json>;
  /** Fetches the page after nextCursor (arrow down past the last item loads it). */
  loadMore?: (cursor: string) => Promise<{ items: QueueItem[]; nextCursor?: string | null }>;
}

/** How many list rows are drawn at once; the window follows the selection. */
const WINDOW = 10;
/** Lines the judge screen needs besides the payload (details, six inputs, hints). */
const FORM_LINES = 16;

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

type Screen =
  | { name: 'list' }
  | { name: 'judge'; item: QueueItem }
  | { name: 'sending'; item: QueueItem }
  | { name: 'result'; item: QueueItem; ok: boolean; text: string };

interface ListProps {
  items: QueueItem[];
  selected: number;
  nextCursor?: string | null;
  agentTag: string;
  loading: boolean;
  problem: string | null;
}

/** The next-page line under the list: loading, or how to load more, and what went wrong. */
function MoreLine({ nextCursor, loading, problem }: Pick<ListProps, 'nextCursor' | 'loading' | 'problem'>) {
  return (
    <>
      {loading ? <Spinner label="loading the next page" /> : nextCursor && <Text dimColor>more on the node: ↓ past the last one loads them</Text>}
      {problem && <Text color="red">{problem}</Text>}
    </>
  );
}

function List({ items, selected, nextCursor, agentTag, loading, problem }: ListProps) {
  if (items.length === 0) {
    return (
      <Box flexDirection="column">
        <Text>Nothing left for {agentTag} to judge on this page.</Text>
        <Text dimColor>{nextCursor ? '↓ next page · q quit' : 'q to quit'}</Text>
        <MoreLine nextCursor={nextCursor} loading={loading} problem={problem} />
      </Box>
    );
  }
  const start = Math.max(0, Math.min(selected - Math.floor(WINDOW / 2), items.length - WINDOW));
  const shown = items.slice(start, start + WINDOW);
  const current = items[selected];
  return (
    <Box flexDirection="column">
      <Text bold>
        {items.length} proposal{items.length === 1 ? '' : 's'} waiting for {agentTag}
      </Text>
      <Text dimColor>↑/↓ move · enter judge · q quit</Text>
      <Box flexDirection="column" marginTop={1}>
        {shown.map((item, i) => {
          const here = start + i === selected;
          return (
            <Text key={item.proposalId} color={here ? 'cyan' : undefined}>
              {here ? '❯ ' : '  '}
              {item.kind.padEnd(15)} {`${item.judgmentCount}/${item.requiredJudgments}`.padEnd(5)} {clip(item.title, 60)}
            </Text>
          );
        })}
      </Box>
      {current && (
        <Box marginTop={1} flexDirection="column">
          <Text dimColor>
            {current.proposalId}
            {current.path ? `  ${current.path}` : ''}
            {`  submitted ${new Date(current.submittedAt).toISOString()}`}
          </Text>
        </Box>
      )}
      <MoreLine nextCursor={nextCursor} loading={loading} problem={problem} />
    </Box>
  );
}

function Details({ item }: { item: QueueItem }) {
  // A frame taller than the terminal makes ink clear the screen on every key: the payload
  // gets what the form leaves of the terminal's height.
  const { stdout } = useStdout();
  const PAYLOAD_LINES = Math.max(3, (stdout.rows || 40) - FORM_LINES);
  const p = item.proposal ?? {};
  const spec: unknown = p.spec ?? p.payload?.spec;
  const lines = JSON.stringify(p.payload ?? {}, null, 2).split('\n');
  return (
    <Box flexDirection="column" marginBottom={1}>
      <Text bold>{item.title}</Text>
      <Text dimColor>
        {item.proposalId} · {item.kind}
        {item.path ? ` · ${item.path}` : ''} · {item.judgmentCount}/{item.requiredJudgments} judgments
      </Text>
      {typeof spec === 'string' && <Text>{spec}</Text>}
      <Text dimColor>
        {lines.slice(0, PAYLOAD_LINES).join('\n') +
          (lines.length > PAYLOAD_LINES ? `\n… (${lines.length - PAYLOAD_LINES} more lines: akas show ${item.proposalId})` : '')}
      </Text>
    </Box>
  );
}

const STEPS = [...SCORE_NAMES, 'rationale', 'confirm'] as const;

function JudgeForm({ item, onSubmit, onCancel }: { item: QueueItem; onSubmit: (scores: Scores, rationale: string) => void; onCancel: () => void }) {
  const [step, setStep] = useState(0);
  const [scores, setScores] = useState<Partial<Scores>>({});
  const [rationale, setRationale] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  // The field's text when it is drawn again: what a paste carried over, or a refused value to fix.
  const [carried, setCarried] = useState('');
  const [drawn, setDrawn] = useState(0);
  useInput((_input, key) => {
    if (key.escape) onCancel();
  });
  const name = STEPS[step];
  const composite = step >= SCORE_NAMES.length ? SCORE_NAMES.reduce((s, n) => s + (scores[n] ?? 0), 0) / SCORE_NAMES.length : null;

  // A field submitted, and what followed its line break in the same chunk: each whole line
  // fills the next field (a pasted "0.9\r0.8\r..." fills the form), stopping at a value that
  // is refused (shown again to fix) and before the confirmation, which only a key answers.
  const submit = (value: string, rest: string) => {
    const { lines, tail } = splitLines(rest);
    const values = [value, ...lines];
    let at = step;
    const nextScores = { ...scores };
    let nextRationale = rationale;
    let refused: { why: string; value: string } | null = null;
    for (const raw of values) {
      const field = STEPS[at];
      if (field === 'confirm') break;
      const v = raw.trim();
      if (field === 'rationale') {
        const why = rationaleProblem(v);
        if (why) {
          refused = { why, value: raw };
          break;
        }
        nextRationale = v;
      } else {
        const n = parseScore(v);
        if (n === null) {
          refused = { why: `${field} is a number from 0 to 1 (e.g. 0.8)`, value: raw };
          break;
        }
        nextScores[field] = n;
      }
      at += 1;
    }
    setScores(nextScores);
    setRationale(nextRationale);
    setProblem(refused?.why ?? null);
    setCarried(refused ? refused.value : STEPS[at] === 'confirm' ? '' : tail);
    setStep(at);
    setDrawn((n) => n + 1);
  };

  return (
    <Box flexDirection="column">
      <Details item={item} />
      {SCORE_NAMES.slice(0, step).map((n) => (
        <Text key={n}>
          {n.padEnd(12)}
          {scores[n]}
        </Text>
      ))}
      {step > SCORE_NAMES.length && (
        <Text>
          {'rationale'.padEnd(12)}
          {rationale}
        </Text>
      )}
      {composite !== null && (
        <Text dimColor>
          {'composite'.padEnd(12)}
          {composite.toFixed(3)} (published at ≥ 0.6 weighted over the judges)
        </Text>
      )}
      {name === 'confirm' ? (
        <Box gap={1}>
          <Text>Sign with your key and send?</Text>
          <YesNo defaultChoice="yes" onYes={() => onSubmit(scores as Scores, rationale)} onNo={onCancel} />
        </Box>
      ) : (
        <Box gap={1}>
          <Text color="cyan">{name.padEnd(12)}</Text>
          <LineInput
            key={`${item.proposalId}-${name}-${drawn}`}
            defaultValue={carried}
            placeholder={name === 'rationale' ? `why (at most ${RATIONALE_MAX} characters)` : '0 to 1'}
            onSubmit={submit}
          />
        </Box>
      )}
      {problem && <Text color="red">{problem}</Text>}
      <Text dimColor>esc back to the list · Ctrl-C quit</Text>
    </Box>
  );
}

/** What the view leaves behind: the judgments recorded, and how it ended. */
export interface QueueViewResult {
  judged: JudgedEntry[];
  /** Ended by Ctrl-C (or SIGINT) rather than q. */
  interrupted: boolean;
  /** A judgment on its way to the node when it was interrupted (its outcome is unknown here). */
  inFlight: string | null;
}

export function Queue(opts: QueueViewOptions & { result: QueueViewResult }) {
  const { exit } = useApp();
  useInput((input, key) => {
    if (key.ctrl && input === 'c') {
      opts.result.interrupted = true;
      exit();
    }
  });
  const [items, setItems] = useState(opts.items);
  const [selected, setSelected] = useState(0);
  const [screen, setScreen] = useState<Screen>({ name: 'list' });
  const [cursor, setCursor] = useState(opts.nextCursor ?? null);
  const [loading, setLoading] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  // Refs, not state, for what the page load reads when it starts and when it lands: two keys
  // in one burst must not start two loads, and the list may change while a page is on its way.
  const loadingRef = useRef(false);
  const itemsRef = useRef(items);
  itemsRef.current = items;

  // The next page is appended (minus what is already listed) and the selection moves onto it.
  const loadMore = () => {
    if (!cursor || !opts.loadMore || loadingRef.current) return;
    loadingRef.current = true;
    setLoading(true);
    setProblem(null);
    opts.loadMore(cursor).then(
      (page) => {
        const have = itemsRef.current;
        const known = new Set(have.map((i) => i.proposalId));
        const added = page.items.filter((i) => !known.has(i.proposalId));
        setItems([...have, ...added]);
        if (added.length > 0) setSelected(have.length);
        setCursor(page.nextCursor ?? null);
        loadingRef.current = false;
        setLoading(false);
      },
      (e: Error) => {
        setProblem(`could not load the next page: ${e.message} (↓ to try again)`);
        loadingRef.current = false;
        setLoading(false);
      },
    );
  };

  useInput(
    (input, key) => {
      if (screen.name === 'list') {
        if (input === 'q' || key.escape) return exit();
        if (loadingRef.current) return; // the list is about to grow: keys wait for it
        const down = key.downArrow || input === 'j';
        // Past the last item (or on an empty page) the next page, when the node has one.
        if (down && cursor && selected >= items.length - 1) return loadMore();
        if (items.length === 0) return;
        if (key.upArrow || input === 'k') setSelected((s) => (s - 1 + items.length) % items.length);
        else if (down) setSelected((s) => (s + 1) % items.length);
        else if (key.return) setScreen({ name: 'judge', item: items[selected] });
      } else if (screen.name === 'result') {
        if (screen.ok) {
          const left = items.filter((i) => i.proposalId !== screen.item.proposalId);
          setItems(left);
          setSelected((s) => Math.min(s, Math.max(0, left.length - 1)));
          // The last one of the page judged: the next page, if any, comes in by itself.
          if (left.length === 0) loadMore();
        }
        setScreen({ name: 'list' });
      }
    },
    { isActive: screen.name === 'list' || screen.name === 'result' },
  );

  const send = (item: QueueItem, scores: Scores, rationale: string) => {
    setScreen({ name: 'sending', item });
    opts.result.inFlight = item.proposalId;
    opts.judge({ proposalId: item.proposalId, scores, rationale }).then(
      (r) => {
        opts.result.inFlight = null;
        opts.result.judged.push({ proposalId: item.proposalId, judgmentId: r.judgmentId ?? null, newStatus: r.newStatus });
        const settled = r.economy?.depositSettlement ? `, deposit ${r.economy.depositSettlement}` : '';
        const text = `judgment ${r.judgmentId} recorded: ${item.proposalId} is ${r.newStatus}${
          r.statusChanged ? ' (decided by this ' + 'judgment' + settled + ')' : ''
        }; +${r.economy?.creditsAwarded ?? 1} credit, balance ${r.economy?.balance}${r.contentSha256 ? `; ` + `signed content ${r.contentSha256}` : ''}`;
        setScreen({ name: 'result', item, ok: true, text });
      },
      (e: Error) => {
        opts.result.inFlight = null;
        setScreen({ name: 'result', item, ok: false, text: e.message });
      },
    );
  };

  switch (screen.name) {
    case 'list':
      // Drawn from copies whose text no terminal acts on (terminal-text.ts); what is judged and signed is the item itself.
      return (
        <List
          items={items.map(terminalSafeDeep)}
          selected={selected}
          nextCursor={cursor}
          agentTag={opts.agentTag}
          loading={loading}
          problem={problem && terminalSafe(problem)}
        />
      );
    case 'judge':
      return <JudgeForm item={terminalSafeDeep(screen.item)} onSubmit={(s, r) => send(screen.item, s, r)} onCancel={() => setScreen({ name: 'list' })} />;
    case 'sending':
      return <Spinner label={`signing and sending your judgment of ${screen.item.proposalId}`} />;
    case 'result':
      return (
        <Box flexDirection="column">
          <StatusMessage variant={screen.ok ? 'success' : 'error'}>{terminalSafe(screen.text)}</StatusMessage>
          <Text dimColor>any key: back to the list</Text>
        </Box>
      );
  }
}

/** Draws the queue until the user quits (q) or interrupts it (Ctrl-C, SIGINT); answers what was judged meanwhile. */
export async function runQueueView(opts: QueueViewOptions): Promise<QueueViewResult> {
  const result: QueueViewResult = { judged: [], interrupted: false, inFlight: null };
  const app = render(<Queue {...opts} result={result} />, { stdout: opts.stdout, stdin: opts.stdin ?? process.stdin, patchConsole: false, exitOnCtrlC: false });
  const onSignal = () => {
    result.interrupted = true;
    app.unmount();
  };
  process.once('SIGINT', onSignal);
  try {
    await app.waitUntilExit();
  } finally {
    process.removeListener('SIGINT', onSignal);
  }
  return result;
}
