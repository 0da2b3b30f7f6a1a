// A progress bar (ink) for transfers and long offline checks. Loaded with a dynamic import,
// and only when stdout is a terminal and --json is off: ink and react cost ~500 ms to load
// and write cursor codes.
import { ProgressBar } from '@inkjs/ui';
import { Box, render, Text } from 'ink';

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** How a count is shown: bytes by default, or plain items. */
export type Unit = (n: number) => string;
export const items: Unit = (n) => String(n);

function Progress({ label, done, total, unit }: { label: string; done: number; total: number; unit: Unit }) {
  const percent = total > 0 ? Math.min(100, Math.floor((done * 100) / total)) : 100;
  return (
    <Box gap={1}>
      <Text>{label}</Text>
      <Box width={30}>
        <ProgressBar value={percent} />
      </Box>
      <Text>
        {String(percent).padStart(3)}% {unit(done)} / {unit(total)}
      </Text>
    </Box>
  );
}

export interface ProgressHandle {
  update(done: number): void;
  /** Removes the bar so the result prints on a clean line. */
  finish(): void;
}

/** Draws a bar for total bytes (or items, with unit); update() is cheap to call per chunk. */
export function startProgress(stdout: NodeJS.WriteStream, label: string, total: number, unit: Unit = formatBytes): ProgressHandle {
  const app = render(<Progress label={label} done={0} total={total} unit={unit} />, { stdout, patchConsole: false, exitOnCtrlC: false });
  let shown = 0;
  let finished = false;
  return {
    update(done) {
      // Redraw on each whole percent at most: ink re-renders the tree on every call.
      if (finished || Math.floor((done * 100) / Math.max(1, total)) === Math.floor((shown * 100) / Math.max(1, total))) return;
      shown = done;
      app.rerender(<Progress label={label} done={done} total={total} unit={unit} />);
    },
    finish() {
      if (finished) return;
      finished = true;
      app.clear();
      app.unmount();
    },
  };
}
