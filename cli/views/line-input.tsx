// One line of text typed on a terminal, for the calibration questionnaire and the judge
// form. @inkjs/ui's TextInput submits only on a chunk that is exactly "\r": when an answer
// and Enter arrive in one chunk (a paste, a slow SSH link, `tmux send-keys "3" Enter`) the
// carriage return went into the text and nothing was submitted, and its state, read from
// the last render, could submit an older value when keys came faster than frames. Here a
// line break anywhere in a chunk submits what comes before it, never enters the text, and
// what follows it is handed on (the next field takes it); the value lives in a ref, so
// every key of a burst sees the keys before it.
import { Text, useInput } from 'ink';
import { useEffect, useRef, useState } from 'react';

/** What one chunk of input does to a line: the text to add, and whether (and with what rest) it submits. */
export interface LineChunk {
  text: string;
  submit: boolean;
  /** What came after the first line break (a following answer), without that break. */
  rest: string;
}

// Control characters other than the line breaks never belong in an answer (a stray escape
// or a terminal's paste markers would otherwise be typed in).
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/** Splits a chunk at its first line break (\r\n, \r or \n). */
export function splitChunk(chunk: string): LineChunk {
  const m = /\r\n|\r|\n/.exec(chunk);
  if (!m) return { text: chunk.replace(CONTROL, ''), submit: false, rest: '' };
  return { text: chunk.slice(0, m.index).replace(CONTROL, ''), submit: true, rest: chunk.slice(m.index + m[0].length) };
}

/** Splits pasted text into complete lines and the unfinished tail. */
export function splitLines(text: string): { lines: string[]; tail: string } {
  const parts = text.split(/\r\n|\r|\n/);
  const tail = parts.pop() ?? '';
  return { lines: parts.map((l) => l.replace(CONTROL, '')), tail: tail.replace(CONTROL, '') };
}

export interface LineInputProps {
  placeholder?: string;
  /** Text already in the field (what a paste carried over from the previous one). */
  defaultValue?: string;
  /** The line, and whatever followed its line break in the same chunk. */
  onSubmit: (value: string, rest: string) => void;
  isDisabled?: boolean;
}

export function LineInput({ placeholder = '', defaultValue = '', onSubmit, isDisabled = false }: LineInputProps) {
  const value = useRef(defaultValue);
  const cursor = useRef([...defaultValue].length);
  const done = useRef(false);
  const [, redraw] = useState(0);
  const changed = () => redraw((n) => n + 1);

  useInput(
    (input, key) => {
      if (done.current) return; // submitted: the rest of the burst belongs to the next field
      if (key.upArrow || key.downArrow || key.tab || key.escape || (key.ctrl && input === 'c')) return;
      const chars = [...value.current];
      if (key.return) {
        done.current = true;
        onSubmit(value.current, '');
        return;
      }
      if (key.leftArrow) cursor.current = Math.max(0, cursor.current - 1);
      else if (key.rightArrow) cursor.current = Math.min(chars.length, cursor.current + 1);
      else if (key.backspace || key.delete) {
        if (cursor.current > 0) {
          chars.splice(cursor.current - 1, 1);
          cursor.current -= 1;
          value.current = chars.join('');
        }
      } else {
        const c = splitChunk(input);
        const added = [...c.text];
        chars.splice(cursor.current, 0, ...added);
        cursor.current += added.length;
        value.current = chars.join('');
        if (c.submit) {
          done.current = true;
          onSubmit(value.current, c.rest);
          return;
        }
      }
      changed();
    },
    { isActive: !isDisabled },
  );
  // The placeholder is drawn once the field listens: ink attaches useInput's handler in an
  // effect after the first paint, and keys that arrive before it are lost. This effect runs
  // after that one, so whoever waits for the placeholder (a person, a test's terminal driver)
  // types into a field that hears it, on a machine of any load.
  const [listening, setListening] = useState(false);
  useEffect(() => setListening(!isDisabled), [isDisabled]);

  const chars = [...value.current];
  if (chars.length === 0) {
    if (!isDisabled && !listening) return <Text> </Text>;
    return isDisabled ? (
      <Text dimColor>{placeholder}</Text>
    ) : (
      <Text>
        <Text inverse>{placeholder[0] ?? ' '}</Text>
        <Text dimColor>{placeholder.slice(1)}</Text>
      </Text>
    );
  }
  return (
    <Text>
      {chars.slice(0, cursor.current).join('')}
      {!isDisabled && <Text inverse>{chars[cursor.current] ?? ' '}</Text>}
      {chars.slice(cursor.current + 1).join('')}
    </Text>
  );
}

/**
 * A yes/no question: y or n (any case), Enter for the default. A chunk such as "y\r"
 * answers by its first letter; a chunk that is neither is ignored.
 */
export function YesNo({
  defaultChoice,
  onYes,
  onNo,
  isDisabled = false,
}: {
  defaultChoice: 'yes' | 'no';
  onYes: () => void;
  onNo: () => void;
  isDisabled?: boolean;
}) {
  const done = useRef(false);
  useInput(
    (input, key) => {
      if (done.current) return;
      const first = input.replace(/[\r\n\s]/g, '').toLowerCase()[0];
      let yes: boolean | undefined;
      if (first === 'y') yes = true;
      else if (first === 'n') yes = false;
      else if (key.return || (input !== '' && /^[\r\n]+$/.test(input))) yes = defaultChoice === 'yes';
      if (yes === undefined) return;
      done.current = true;
      if (yes) onYes();
      else onNo();
    },
    { isActive: !isDisabled },
  );
  return <Text dimColor>{defaultChoice === 'yes' ? 'Y/n' : 'y/N'}</Text>;
}
