// A knowledge node (or a brief) drawn for a terminal with ink: the heading in colour, each
// section of evidence in its own block, the verification status coloured by what it means,
// and the children as a tree. Drawn once with renderToString (no cursor codes, nothing left
// running). Loaded with a dynamic import, only on a terminal without --json.
import { Box, renderToString, Text } from 'ink';
import type { NodeModel, Row, Section } from '../commands/knowledge/view.js';

const TONE: Record<NonNullable<Row['tone']>, string> = { good: 'green', bad: 'red', weak: 'yellow' };

function SectionView({ s }: { s: Section }) {
  const width = Math.max(0, ...(s.rows ?? []).map((r) => r.label.length));
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text bold color="cyan">
        {s.title}
      </Text>
      {s.note && <Text dimColor>{s.note}</Text>}
      {(s.rows ?? []).map((r, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a section is printed once and never reordered; labels and titles may repeat
        <Box key={i} paddingLeft={2}>
          <Box width={width + 2} flexShrink={0}>
            <Text dimColor>{r.label}</Text>
          </Box>
          <Text color={r.tone ? TONE[r.tone] : undefined} bold={r.tone === 'good' || r.tone === 'bad'}>
            {r.value}
          </Text>
        </Box>
      ))}
      {(s.lines ?? []).map((l, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a section is printed once and never reordered; labels and titles may repeat
        <Box key={i} paddingLeft={2}>
          <Text>{l}</Text>
        </Box>
      ))}
    </Box>
  );
}

function NodeView({ m }: { m: NodeModel }) {
  const last = m.children.length - 1;
  return (
    <Box flexDirection="column">
      <Box borderStyle="round" borderColor="cyan" flexDirection="column" paddingX={1}>
        <Text>
          <Text bold>{m.path}</Text> <Text color="magenta">{m.kind}</Text>
        </Text>
        <Text bold>{m.title}</Text>
        <Text dimColor>{m.facts.join(' · ')}</Text>
        {m.spec && (
          <Box marginTop={1}>
            <Text>{m.spec}</Text>
          </Box>
        )}
      </Box>
      {m.sections.map((s, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a section is printed once and never reordered; labels and titles may repeat
        <SectionView key={i} s={s} />
      ))}
      {(m.children.length > 0 || m.kind === 'branch') && (
        <Box flexDirection="column" marginTop={1}>
          <Text bold color="cyan">
            children{m.children.length ? ` (${m.children.length}${m.more ? '+' : ''})` : ': none'}
          </Text>
          {m.children.map((c, i) => (
            <Text key={c}>
              <Text dimColor>{i === last && !m.more ? '└── ' : '├── '}</Text>
              {c}
            </Text>
          ))}
          {m.more && <Text dimColor>└── … more: {m.more}</Text>}
        </Box>
      )}
    </Box>
  );
}

/** The model drawn for a terminal `columns` wide. */
export function renderNode(m: NodeModel, columns: number): string {
  return renderToString(<NodeView m={m} />, { columns: Math.max(40, columns) });
}
