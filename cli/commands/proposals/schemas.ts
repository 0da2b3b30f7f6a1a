// akas schemas: the node's tools with their prices, the challenge answer schemas, and each
// proposal kind's payload (--kind KIND: every field described, with its template; PROTOCOL 4.1).
import type { Command } from 'commander';
import { type Json, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';

export function schemasCommands(program: Command, cli: Cli) {
  program
    .command('schemas')
    .summary("tool prices, challenge answer schemas and each proposal kind's payload")
    .description("the tools with their prices, challenge answer schemas, and each proposal kind's payload (--kind KIND: every field described)")
    .option('--kind <kind>', "one proposal kind's payload, field by field, with its template")
    .action(
      action(cli, async (opts: { kind?: string }) => {
        const s = await cli.client().get<Json>('/api/agent/v1/schemas');
        const proposals = (s.proposals ?? {}) as Json;
        if (opts.kind) {
          const { parseKind, KIND_NAMES } = await import('./judge-input.js');
          const kind = parseKind(opts.kind);
          if (!kind || !proposals[kind]) throw usageError(`unknown kind "${opts.kind}"; one of: ${KIND_NAMES.join(', ')}`);
          const p = proposals[kind];
          cli
            .output()
            .result(p, () =>
              [
                `${kind}: ${p.description}`,
                `  propose: akas propose ${kind} --file payload.json (POST ${p.proposeUrl}); check first with --dry-run`,
                '',
                ...fieldLines(p.schema, 1),
                '',
                `a complete example (akas propose ${kind} --template):`,
                JSON.stringify(p.template, null, 2),
              ].join('\n'),
            );
          return;
        }
        cli
          .output()
          .result(s, () =>
            [
              'tools:',
              ...Object.entries(s.tools as Json).map(([k, v]) => `  ${k.padEnd(14)} x${v.costMultiplier}  ${v.description}`),
              'challenge schemas:',
              ...Object.entries(s.challenges as Json).map(([k, v]) => `  ${k.padEnd(16)} ${v.description}`),
              s.note,
              ...(Object.keys(proposals).length
                ? [
                    'proposal payloads (akas schemas --kind KIND for every field; akas propose KIND --template prints one to edit, --dry-run checks it):',
                    ...Object.entries(proposals).map(([k, v]) => `  ${k.padEnd(16)} ${(v as Json).description}`),
                  ]
                : []),
            ].join('\n'),
          );
      }),
    );
}

// A JSON Schema's fields as an indented list: name, required or optional, type, description.
function fieldLines(schema: Json, depth: number): string[] {
  const props = (schema?.properties ?? {}) as Json;
  const required = new Set((schema?.required ?? []) as string[]);
  const pad = '  '.repeat(depth);
  const lines: string[] = [];
  for (const [name, sub] of Object.entries(props) as Array<[string, Json]>) {
    lines.push(`${pad}${name}  (${required.has(name) ? 'required' : 'optional'}, ${typeName(sub)})${sub.description ? `  ${sub.description}` : ''}`);
    if (sub.properties) lines.push(...fieldLines(sub, depth + 1));
    else if (sub.items?.properties) lines.push(...fieldLines(sub.items, depth + 1));
  }
  return lines;
}

function typeName(s: Json): string {
  if (s.anyOf) return (s.anyOf as Json[]).map(typeName).join(' or ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.type === 'array') return `array of ${s.items ? typeName(s.items) : 'any'}`;
  if (s.type === 'object' && s.patternProperties) return 'object of name: value';
  return String(s.type ?? 'any');
}
