// Drives ink views in tests through React's act(), never through timers: a chunk written to
// stdin is handled, rendered, and the effects of that render run (ink attaches a field's key
// listener in an effect, so the next field hears nothing until it has run) before act
// resolves. A sleep of a few milliseconds between chunks lost keys on a busy machine, where
// the effect came after the sleep (issue 31, item 6; ARCHITECTURE 5: tests never race the clock).
import { render } from 'ink-testing-library';
import { act, type ReactElement } from 'react';

type ActGlobal = { IS_REACT_ACT_ENVIRONMENT?: boolean };

/** Tells React that act() drives this file's renders; returns what puts the setting back. */
export function reactActEnvironment(): () => void {
  const g = globalThis as ActGlobal;
  const saved = g.IS_REACT_ACT_ENVIRONMENT;
  g.IS_REACT_ACT_ENVIRONMENT = true;
  return () => {
    if (saved === undefined) delete g.IS_REACT_ACT_ENVIRONMENT;
    else g.IS_REACT_ACT_ENVIRONMENT = saved;
  };
}

export type InkView = ReturnType<typeof render>;

/** Renders an ink element with ink-testing-library, its first effects run (its fields listen). */
export async function renderInk(element: ReactElement): Promise<InkView> {
  let view: InkView | undefined;
  await act(async () => {
    view = render(element);
  });
  return view!;
}

/**
 * Writes chunks the way a terminal delivers them: all of them before React renders any (keys
 * typed faster than frames), then lets it render and run its effects, so whatever a chunk
 * opened (the next field, the confirmation) is listening when this resolves.
 */
export async function typeChunks(stdin: InkView['stdin'], ...chunks: string[]): Promise<void> {
  await act(async () => {
    for (const chunk of chunks) stdin.write(chunk);
  });
}
