// JSON Logic as decision-graph conditions (PROTOCOL 6.2, 10.5), tamed. json-logic-js evaluates
// any rule it is given: `map` over literal arrays nested three deep holds a node for minutes,
// and `log` prints the caller's text on the node's stdout (forging its log lines). So:
//
// - an allow-list of operators: comparison, logic, arithmetic, `var`, `missing`, `in`, `cat`,
//   `substr`. No operator that loops (`map`, `filter`, `reduce`, `all`, `some`, `none`),
//   builds arrays (`merge`), prints (`log`) or calls methods (`method`);
// - a bound on a rule's size and depth, checked when a graph is proposed;
// - evaluation under a budget of steps for a whole traversal: every operator applied and every
//   literal costs a step, and every value read from the inputs (and every string `cat` builds)
//   costs steps in proportion to its size, so no operator does work the budget did not pay
//   for. A traversal over budget stops and says so (like the depth limit).
//
// The evaluation is json-logic-js's own (the library's semantics, tested by it); this module
// only meters its recursion, which goes through `jsonLogic.apply`, and refuses an operator off
// the list wherever a rule comes from (a graph published before these rules included).
import jsonLogic from 'json-logic-js';

/** The operators a condition may use. */
export const LOGIC_OPERATORS: ReadonlySet<string> = new Set([
  'var',
  'missing',
  'missing_some',
  'if',
  '?:',
  'and',
  'or',
  '!',
  '!!',
  '==',
  '===',
  '!=',
  '!==',
  '>',
  '>=',
  '<',
  '<=',
  '+',
  '-',
  '*',
  '/',
  '%',
  'max',
  'min',
  'in',
  'cat',
  'substr',
]);

/** A condition holds at most this many JSON values (operators, arguments, literals). */
export const LOGIC_MAX_VALUES = 500;
/** A condition nests at most this deep (objects and arrays). */
export const LOGIC_MAX_DEPTH = 32;
/** Steps a traversal's conditions may take together, by default (DomainConfig.traversalLogicBudget). */
export const LOGIC_BUDGET = 100_000;

/** Bytes of text (or elements of a list) that cost one step when read from the inputs. */
const BYTES_PER_STEP = 64;

/** The traversal's conditions used up their step budget. */
export class LogicBudgetSpent extends Error {
  constructor() {
    super('the conditions used up their step budget');
    this.name = 'LogicBudgetSpent';
  }
}

/** A condition uses an operator off the allow-list. */
export class LogicRefused extends Error {
  constructor(readonly operator: string) {
    super(`${JSON.stringify(operator.slice(0, 40))} is not an allowed JSON Logic operator`);
    this.name = 'LogicRefused';
  }
}

/** What a traversal has left to spend on conditions. */
export interface LogicMeter {
  left: number;
}

let meter: LogicMeter | undefined;

// What a value read from the inputs costs: its strings by length, its lists and objects by
// their entries, walked no further than the budget left (the walk itself is paid for).
function sizeCost(value: unknown, limit: number): number {
  let cost = 0;
  const stack = [value];
  while (stack.length && cost <= limit) {
    const v = stack.pop();
    if (typeof v === 'string') cost += Math.ceil(v.length / BYTES_PER_STEP);
    else if (Array.isArray(v)) {
      cost += Math.ceil(v.length / BYTES_PER_STEP) + 1;
      for (const x of v) stack.push(x);
    } else if (v && typeof v === 'object') {
      const values = Object.values(v);
      cost += Math.ceil(values.length / BYTES_PER_STEP) + 1;
      for (const x of values) stack.push(x);
    }
  }
  return cost;
}

function spend(steps: number) {
  if (!meter) return;
  meter.left -= steps;
  if (meter.left < 0) throw new LogicBudgetSpent();
}

// json-logic-js recurses through the exported `apply`: each call is a step, each operator is
// checked against the allow-list, and what `var` reads and `cat` builds is paid for by size.
const libraryApply = jsonLogic.apply.bind(jsonLogic);
jsonLogic.apply = function meteredApply(logic: unknown, data: unknown) {
  spend(typeof logic === 'string' ? 1 + Math.ceil(logic.length / BYTES_PER_STEP) : 1);
  let op: string | undefined;
  if (logic !== null && typeof logic === 'object' && !Array.isArray(logic)) {
    const keys = Object.keys(logic);
    if (keys.length === 1) {
      op = keys[0];
      if (!LOGIC_OPERATORS.has(op)) throw new LogicRefused(op);
    }
  }
  const result = libraryApply(logic as jsonLogic.RulesLogic, data);
  if (op === 'var' || op === 'cat') spend(sizeCost(result, meter ? meter.left + 1 : 0));
  return result;
} as typeof jsonLogic.apply;

/**
 * Whether a condition holds on the inputs, spending steps from the meter. Throws
 * LogicBudgetSpent when the steps run out, LogicRefused for an operator off the list, and
 * whatever json-logic-js throws for a rule it cannot evaluate.
 */
export function holds(condition: unknown, inputs: Record<string, unknown>, steps: LogicMeter): boolean {
  if (typeof condition === 'boolean') return condition;
  meter = steps;
  try {
    return jsonLogic.truthy(jsonLogic.apply(condition as jsonLogic.RulesLogic, inputs));
  } finally {
    meter = undefined;
  }
}

/**
 * The problems of a condition as proposed (PROTOCOL 6.2): its size and depth, every operator on
 * the allow-list, every `var` it reads declared in inputsRequired.
 */
export function logicProblems(rule: unknown, inputs: ReadonlySet<string>, at: string): Array<{ field: string; reason: string }> {
  const errors: Array<{ field: string; reason: string }> = [];
  let values = 0;
  let depth = 0;
  const measure = (v: unknown, d: number) => {
    values++;
    if (d > depth) depth = d;
    if (values > LOGIC_MAX_VALUES || depth > LOGIC_MAX_DEPTH) return;
    if (Array.isArray(v)) for (const x of v) measure(x, d + 1);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) measure(x, d + 1);
  };
  measure(rule, 1);
  if (depth > LOGIC_MAX_DEPTH) return [{ field: at, reason: `the condition nests deeper than ${LOGIC_MAX_DEPTH} levels` }];
  if (values > LOGIC_MAX_VALUES) return [{ field: at, reason: `the condition is larger than ${LOGIC_MAX_VALUES} values (operators, arguments and literals)` }];
  check(rule, inputs, at, errors);
  return errors;
}

// Walks a rule: every operator on the list, every var it reads declared in inputsRequired (so a
// traversal can ask for everything it needs).
function check(rule: unknown, inputs: ReadonlySet<string>, at: string, errors: Array<{ field: string; reason: string }>) {
  if (Array.isArray(rule)) {
    for (const [i, r] of rule.entries()) check(r, inputs, `${at}[${i}]`, errors);
    return;
  }
  if (rule === null || typeof rule !== 'object') return;
  const ops = Object.keys(rule);
  if (ops.length !== 1 || !jsonLogic.is_logic(rule)) {
    errors.push({ field: at, reason: 'a JSON Logic rule is an object with exactly one operator' });
    return;
  }
  const op = ops[0];
  if (!LOGIC_OPERATORS.has(op)) {
    errors.push({ field: at, reason: `${new LogicRefused(op).message} (allowed: ${[...LOGIC_OPERATORS].join(' ')})` });
    return;
  }
  const args = (rule as Record<string, unknown>)[op];
  if (op === 'var') {
    const name = Array.isArray(args) ? args[0] : args;
    if (typeof name === 'string' && name !== '' && !inputs.has(name) && !inputs.has(name.split('.')[0])) {
      errors.push({ field: at, reason: `reads "${name}", which inputsRequired does not declare` });
    }
    return;
  }
  check(args, inputs, `${at}.${op}`, errors);
}
