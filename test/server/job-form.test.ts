/**
 * The page's job form is derived from the contract (src/server/web/schema-form.js over the JobRequest
 * schema of /openapi.json). This test walks that schema on its own, leaf by leaf (every property of every
 * object, every variant of every union, one level into arrays of objects), and for each leaf finds the
 * form's control, switches on what a user would switch on to reach it (optional sections, the union's
 * variant, one list item), types a value and checks the request body carries it at the leaf's path. A
 * field the form cannot set fails here by name. The body of an untouched form is the API's defaults.
 */
import t from 'tap';
import { jobSpecSchema } from '../../src/jobs/index.js';
import { openApiDocument } from '../../src/server/contract/document.js';

type Json = Record<string, unknown>;
interface Control {
  id: string;
  key: string;
  kind: string;
  optional?: boolean;
  children?: Control[];
  variants?: Array<{ name: string; control: Control }>;
}
interface State {
  values: Record<string, unknown>;
  on: Record<string, boolean>;
  variant: Record<string, string>;
  count: Record<string, number>;
}
interface FormModel {
  LEAF_KINDS: string[];
  jobForm(doc: object): { root: Control; unsupported: string[] };
  initialState(root: Control): State;
  itemsOf(c: Control, state: State): Control[];
  bodyOf(c: Control, state: State): unknown;
}

const form = (await import(
  new URL('../../src/server/web/schema-form.js', import.meta.url).href
)) as FormModel;
const doc = openApiDocument().json as { components: { schemas: Record<string, Json> } };

function deref(node: Json): Json {
  let out = node;
  while (typeof out.$ref === 'string') {
    const { $ref, ...rest } = out;
    out = { ...(doc.components.schemas[($ref as string).split('/').pop() as string] as Json), ...rest };
  }
  return out;
}

interface Leaf {
  /** Keys through the schema; a union's branch as `|name`, an array item as `[]`. */
  steps: string[];
  /** Where the value lands in the body. */
  path: Array<string | number>;
  schema: Json;
}

const branchName = (b: Json): string => {
  const props = (b.properties ?? {}) as Record<string, Json>;
  const c = Object.entries(props).find(([, p]) => p.const !== undefined);
  return c ? String(c[1].const) : String((b.required as string[])[0]);
};

/** Every leaf of a schema node, on its own terms (not the form's). */
function leaves(raw: Json, steps: string[], path: Array<string | number>, inItems: boolean): Leaf[] {
  const s = deref(raw);
  const branches = (s.oneOf ?? s.anyOf) as Json[] | undefined;
  if (branches?.every((b) => deref(b).type === 'object')) {
    return branches.flatMap((b) =>
      leaves({ ...deref(b) }, [...steps, `|${branchName(deref(b))}`], path, inItems),
    );
  }
  if (!branches && s.type === 'object' && s.properties) {
    return Object.entries(s.properties as Record<string, Json>)
      .filter(([, p]) => p.const === undefined)
      .flatMap(([k, p]) => leaves(p, [...steps, k], [...path, k], inItems));
  }
  const items = s.items === undefined ? undefined : deref(s.items as Json);
  if (s.type === 'array' && items?.type === 'object') {
    // Arrays of objects are recursive here (filter.anyOf holds filters): one level down is enough.
    return inItems ? [] : leaves(items, [...steps, '[]'], [...path, 0], true);
  }
  return [{ steps, path, schema: s }];
}

/** What a user types into the leaf's control, and what the body should then hold. */
function sample(leaf: Leaf): { raw: unknown; want: unknown } {
  const s = leaf.schema;
  const enumOf = s.enum as unknown[] | undefined;
  if (enumOf) return { raw: enumOf.at(-1), want: enumOf.at(-1) };
  if (s.type === 'boolean') return { raw: !(s.default ?? false), want: !(s.default ?? false) };
  if (s.type === 'integer' || s.type === 'number') {
    const lo = Number(s.minimum ?? s.exclusiveMinimum ?? 0);
    const hi = Math.min(Number(s.maximum ?? lo + 10), lo + 10);
    const v = s.type === 'integer' ? Math.ceil((lo + hi) / 2) : (lo + hi) / 2;
    const x = v === s.default ? hi : v;
    return { raw: String(x), want: x };
  }
  if (s.type === 'object') return { raw: 'paraphrase=0.5', want: { paraphrase: 0.5 } };
  if (s.type === 'array' || s.anyOf) return { raw: 'a, b', want: ['a', 'b'] };
  if (s.format === 'date-time') return { raw: '2026-01-31T00:00:00Z', want: '2026-01-31T00:00:00Z' };
  return { raw: 'x1', want: 'x1' };
}

/** The form's control at the leaf, with the state a user reaches it in. */
function reach(root: Control, state: State, steps: string[]): Control {
  let c = root;
  for (const step of steps) {
    if (step === '[]') {
      state.count[c.id] = 1;
      c = form.itemsOf(c, state)[0] as Control;
    } else if (step.startsWith('|')) {
      const v = c.variants?.find((x) => x.name === step.slice(1));
      if (!v) throw new Error(`${c.id}: no variant ${step.slice(1)}`);
      state.variant[c.id] = v.name;
      c = v.control;
    } else {
      const next = c.children?.find((x) => x.key === step);
      if (!next) throw new Error(`${c.id || 'the form'}: no control for ${step}`);
      c = next;
    }
    if (c.kind === 'object' && c.optional) state.on[c.id] = true;
  }
  return c;
}

const at = (x: unknown, path: Array<string | number>): unknown =>
  path.reduce<unknown>((v, k) => (v === undefined || v === null ? undefined : (v as Json)[k]), x);

t.test('every leaf of the job schema can be set from the form', async (t) => {
  const { root, unsupported } = form.jobForm(doc);
  t.same(unsupported, [], 'no schema node the form has no control for');
  const all = leaves(doc.components.schemas.JobRequest as Json, [], [], false);
  t.ok(all.length >= 60, `${all.length} leaves`);
  const missed: string[] = [];
  for (const leaf of all) {
    const name = leaf.steps.join('.');
    const state = form.initialState(root);
    let c: Control;
    try {
      c = reach(root, state, leaf.steps);
    } catch (e) {
      missed.push(`${name}: ${(e as Error).message}`);
      continue;
    }
    if (!form.LEAF_KINDS.includes(c.kind)) {
      missed.push(`${name}: control kind ${c.kind}`);
      continue;
    }
    const { raw, want } = sample(leaf);
    // A list is typed comma-separated, or one item a line where items are sentences.
    state.values[c.id] = c.kind === 'lines' ? String(raw).replace(', ', '\n') : raw;
    const got = at(form.bodyOf(root, state), leaf.path);
    if (JSON.stringify(got) !== JSON.stringify(want)) missed.push(`${name}: sent ${JSON.stringify(got)}`);
  }
  t.same(missed, [], 'every leaf reaches the request body');
});

t.test('an untouched form sends what the API would default to anyway', async (t) => {
  const { root } = form.jobForm(doc);
  const body = form.bodyOf(root, form.initialState(root));
  t.same(jobSpecSchema.parse(body), jobSpecSchema.parse({}));
});

t.test('a document-pair job with its alignment, as the page builds it, is a valid job', async (t) => {
  const { root } = form.jobForm(doc);
  const state = form.initialState(root);
  const min = reach(root, state, ['docPairs', 'align', 'min']);
  state.values[min.id] = '0.3';
  const partners = reach(root, state, ['docPairs', 'align', 'partners']);
  state.values[partners.id] = '2';
  const within = reach(root, state, ['withinGroup']);
  state.values[within.id] = 'lang';
  const spec = jobSpecSchema.parse(form.bodyOf(root, state));
  t.match(spec.docPairs, { docKey: 'doc', align: { min: 0.3, partners: 2 } });
  t.equal(spec.withinGroup, 'lang', 'one key is sent as a string');
});
