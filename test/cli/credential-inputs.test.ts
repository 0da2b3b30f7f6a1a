// What `akas verify credential` reads (cli/commands/verify/credential-inputs.ts) and how many threads it takes
// (cli/commands/verify/pool.ts): files read straight into one shared buffer, split into credentials with
// their sources, and the load that decides the threads read from now, not only the last minute.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listInputFiles, readCredentialInputs } from '../../cli/commands/verify/credential-inputs.js';
import { busyElsewhere } from '../../cli/commands/verify/pool.js';
import { tempDir } from '../helpers/e2e.js';

const work = tempDir('akas-credential-inputs-');
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('reading the credentials to check', () => {
  it('reads every file into one shared buffer, JSON lines split by line with blank lines skipped, in name order', () => {
    const folder = join(work, 'many');
    mkdirSync(join(folder, 'sub'), { recursive: true });
    writeFileSync(join(folder, 'a.jsonl'), '{"n":1}\n\n{"n":2}\r\n   \n{"n":3}\n');
    writeFileSync(join(folder, 'sub', 'b.json'), '{\n  "n": 4\n}\n');
    writeFileSync(join(folder, 'notes.txt'), 'not read');
    const listed = listInputFiles([folder, join(work, 'missing.json')]);
    expect(listed.files.map((f) => f.path)).toEqual([join(folder, 'a.jsonl'), join(folder, 'sub', 'b.json')]);
    expect(listed.bytes).toBe(listed.files.reduce((a, f) => a + f.size, 0));
    expect(listed.unreadable).toEqual([{ source: join(work, 'missing.json'), reason: 'ENOENT' }]);

    const { inputs, unreadable } = readCredentialInputs(listed, () => Buffer.alloc(0));
    expect(unreadable).toEqual(listed.unreadable);
    expect(inputs.map((i) => [i.source, i.bytes.toString('utf8').trim()])).toEqual([
      [`${join(folder, 'a.jsonl')}:1`, '{"n":1}'],
      [`${join(folder, 'a.jsonl')}:3`, '{"n":2}'],
      [`${join(folder, 'a.jsonl')}:5`, '{"n":3}'],
      [join(folder, 'sub', 'b.json'), '{\n  "n": 4\n}'],
    ]);
    // One SharedArrayBuffer holds them all: the verifier threads share it with no copy.
    const region = inputs[0].bytes.buffer;
    expect(region).toBeInstanceOf(SharedArrayBuffer);
    expect(inputs.every((i) => i.bytes.buffer === region)).toBe(true);
  });

  it('reads a file that grew after it was listed whole, on its own, and stdin beside the files', () => {
    const file = join(work, 'grows.jsonl');
    writeFileSync(file, '{"n":1}\n');
    const listed = listInputFiles([file, '-']);
    writeFileSync(file, '{"n":1}\n{"n":2}\n{"n":3}\n');
    const { inputs, unreadable } = readCredentialInputs(listed, () => Buffer.from('{"from":"stdin"}'));
    expect(unreadable).toEqual([]);
    expect(inputs.map((i) => [i.source, i.bytes.toString('utf8')])).toEqual([
      [`${file}:1`, '{"n":1}'],
      [`${file}:2`, '{"n":2}'],
      [`${file}:3`, '{"n":3}'],
      ['stdin', '{"from":"stdin"}'],
    ]);
  });

  it('reads a pipe as it comes, with nothing lost (akas verify credential <(curl ...))', () => {
    const fifo = join(work, 'pipe.jsonl');
    execFileSync('mkfifo', [fifo]);
    const listed = listInputFiles([fifo]);
    expect(listed.files).toEqual([{ path: fifo, size: 0, regular: false }]);
    expect(listed.bytes).toBe(0);
    const writer = spawn('sh', ['-c', `printf '{"n":1}\n{"n":2}\n' > '${fifo}'`], { stdio: 'ignore' });
    const { inputs, unreadable } = readCredentialInputs(listed, () => Buffer.alloc(0));
    writer.kill();
    expect(unreadable).toEqual([]);
    expect(inputs.map((i) => [i.source, i.bytes.toString('utf8')])).toEqual([
      [`${fifo}:1`, '{"n":1}'],
      [`${fifo}:2`, '{"n":2}'],
    ]);
  });

  it('names a file that vanished between listing and reading, and goes on', () => {
    const gone = join(work, 'gone.json');
    const kept = join(work, 'kept.json');
    writeFileSync(gone, '{"n":1}');
    writeFileSync(kept, '{"n":2}');
    const listed = listInputFiles([gone, kept]);
    rmSync(gone);
    const { inputs, unreadable } = readCredentialInputs(listed, () => Buffer.alloc(0));
    expect(unreadable).toEqual([{ source: gone, reason: 'ENOENT' }]);
    expect(inputs.map((i) => i.source)).toEqual([kept]);
  });
});

describe('the load that decides how many threads check', () => {
  it('is the smaller of the tasks runnable now beside this one and the 1-minute average', () => {
    // Just after a busy minute, idle now: the cores are free.
    expect(busyElsewhere('2.10 1.40 0.90 1/180 4242\n', 2.1)).toBe(0);
    // Busy now and for the last minute: two other tasks run.
    expect(busyElsewhere('2.00 1.90 1.50 3/180 4242\n', 2.0)).toBe(2);
    // Busy now only (a blip, or work just started): the quiet minute says so.
    expect(busyElsewhere('0.10 0.20 0.30 4/180 4242\n', 0.1)).toBe(0.1);
    // No /proc (not Linux), or a line that is not one: the average alone.
    expect(busyElsewhere(undefined, 1.5)).toBe(1.5);
    expect(busyElsewhere('garbage', 1.5)).toBe(1.5);
    // This process's own runnable threads (its JIT and GC helpers) are not other work.
    expect(busyElsewhere('2.00 1.90 1.50 3/180 4242\n', 2.0, 3)).toBe(0);
    expect(busyElsewhere('2.00 1.90 1.50 4/180 4242\n', 2.0, 2)).toBe(2);
  });
});
