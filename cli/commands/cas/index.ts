// akas cas put | get | head: the node's content-addressable store from the shell. The
// streaming work lives in cli/commands/cas/transfer.ts, imported only when a transfer runs, so that
// `akas --help` does not load node:stream, node:crypto or undici.
import type { Command } from 'commander';
import { CliError, type Json, table, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';

const transfer = () => import('./transfer.js');

export function casCommands(program: Command, cli: Cli) {
  const cas = program
    .command('cas')
    .summary("the node's content-addressable store: blobs named by their sha256")
    .description("the node's content-addressable store: blobs named by their sha256 (1 byte to 10 MiB)");

  cas
    .command('put')
    .summary('store files; prints each sha256 and fetch URL')
    .description('store files; prints each sha256 and fetchUrl (identical bytes are stored once)')
    .argument('<files...>', 'files to store')
    .action(
      action(cli, async (files: string[]) => {
        const out = cli.output();
        const done: Array<{ file: string; answer: Json }> = [];
        const listed = () => done.map(({ file, answer }) => ({ file, ...answer }));
        for (const file of files) {
          let answer: Json;
          try {
            answer = await (await transfer()).putFile(cli, out, file);
          } catch (e) {
            // Scripts still learn what was stored before the failure.
            if (CliError.is(e) && done.length > 0) Object.assign(e.body, { completed: listed() });
            throw e;
          }
          done.push({ file, answer });
          if (!out.json) {
            out.result(answer, `${answer.sha256}  ${file}${answer.deduplicated ? '  (already stored)' : ''}\n  ${answer.fetchUrl}`);
          }
        }
        // --json: one file prints exactly the node's answer; several, the list of answers with their file.
        if (out.json) out.result(files.length === 1 ? done[0].answer : listed(), '');
      }),
    );

  cas
    .command('get')
    .summary('fetch a blob to a file, checked against its sha256 first')
    .description('fetch a blob to a file, checking its sha256 before the file appears (exit 1 on a mismatch, leaving no file)')
    .argument('<sha256>', 'the blob hash (64 hex)')
    .option('-o, --output <file>', 'where to write it (default ./<sha256>; - for stdout, after the check)')
    .action(
      action(cli, async (hex: string, opts: { output?: string }) => {
        const { parseSha, getBlob } = await transfer();
        const sha256 = parseSha(hex);
        const out = cli.output();
        if (opts.output === '-' && out.json) throw usageError('-o - writes the blob to stdout; it cannot be combined with --json');
        const result = await getBlob(cli, out, sha256, opts.output ?? sha256);
        if (result) out.result(result, `${sha256}  ${result.path}  (${result.bytes} bytes, sha256 verified)`);
      }),
    );

  cas
    .command('head')
    .summary('whether the node holds a blob, and its size')
    .description('does the node hold a blob, and how big is it (exit 1 when it does not)')
    .argument('<sha256>', 'the blob hash (64 hex)')
    .action(
      action(cli, async (hex: string) => {
        const sha256 = (await transfer()).parseSha(hex);
        const info = await cli.client().get<Json>(`/api/cas/${sha256}?head=1`);
        cli.output().result(info, () =>
          table([
            ['exists', info.exists],
            ['bytes', info.bytes],
            ['fetchUrl', info.fetchUrl],
          ]),
        );
        return info.exists ? 0 : 1;
      }),
    );
}
