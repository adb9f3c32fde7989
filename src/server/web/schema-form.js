// The job form's model, derived from the contract: the JobRequest JSON Schema (GET /openapi.json, made
// from the job spec's zod schema) walked into a tree of controls, and the controls' values turned back
// into a request body. No preact here: the suite walks the same tree in Node (test/server/job-form.test.ts)
// and fails on any field of the schema that has no control.

/** The control kinds the page renders (jobform.js); a schema node that fits none is reported. */
export const LEAF_KINDS = ['number', 'integer', 'text', 'boolean', 'enum', 'list', 'lines', 'map'];

/** `$ref`s resolved against the document's components, the referring node's own keys kept. */
function deref(node, doc) {
  let out = node;
  while (out?.$ref) {
    const { $ref, ...rest } = out;
    out = { ...doc.components.schemas[$ref.split('/').pop()], ...rest };
  }
  return out;
}

/** camelCase key as words: minCosine → min cosine. */
const words = (key) => key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();

const isStringArray = (s) => s.type === 'array' && s.items?.type === 'string';

/** A union's branches as named variants: by their `const` discriminator, else by their one required key. */
function variantsOf(branches, doc) {
  return branches.map((raw) => {
    const b = deref(raw, doc);
    const constKey = Object.entries(b.properties ?? {}).find(([, p]) => p.const !== undefined);
    return { name: constKey ? constKey[1].const : b.required?.[0], schema: b };
  });
}

/**
 * The control tree of a schema node. `id` is the control's path: keys joined by '.', a union's
 * variant as `key|variant`, an array of objects' items as `key[]` (`key[2]` in the state).
 */
export function controlOf(raw, doc, id, key, required, unsupported) {
  const s = deref(raw, doc);
  const base = { id, key, label: words(key), hint: s.description, default: s.default, required };
  const branches = s.oneOf ?? s.anyOf;
  if (branches) {
    if (branches.every((b) => deref(b, doc).type === 'object')) {
      const variants = variantsOf(branches, doc).map((v) => ({
        name: v.name,
        control: objectControl(v.schema, doc, `${id}|${v.name}`, key, true, unsupported),
      }));
      return { ...base, kind: 'union', variants };
    }
    // A key or a list of keys (withinGroup): one list control, a single value sent as a string.
    if (
      branches.some((b) => deref(b, doc).type === 'string') &&
      branches.some((b) => isStringArray(deref(b, doc)))
    )
      return { ...base, kind: 'list', single: true };
  }
  if (s.type === 'object' && s.properties) return objectControl(s, doc, id, key, required, unsupported);
  if (s.type === 'object' && s.additionalProperties?.type === 'number') return { ...base, kind: 'map' };
  if (s.type === 'array' && deref(s.items, doc)?.type === 'object')
    return {
      ...base,
      kind: 'items',
      item: () => objectControl(deref(s.items, doc), doc, `${id}[]`, key, true, []),
    };
  if (isStringArray(s)) return { ...base, kind: (s.items.maxLength ?? 0) >= 1000 ? 'lines' : 'list' };
  if (s.enum) return { ...base, kind: 'enum', options: s.enum };
  if (s.type === 'number' || s.type === 'integer')
    return { ...base, kind: s.type, min: s.minimum ?? s.exclusiveMinimum, max: s.maximum };
  if (s.type === 'boolean') return { ...base, kind: 'boolean' };
  if (s.type === 'string') return { ...base, kind: 'text', format: s.format };
  unsupported.push(id);
  return { ...base, kind: 'unsupported' };
}

function objectControl(s, doc, id, key, required, unsupported) {
  const req = new Set(s.required ?? []);
  const children = [];
  let constant;
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    if (p.const !== undefined) constant = { key: k, value: p.const };
    else children.push(controlOf(p, doc, id ? `${id}.${k}` : k, k, req.has(k), unsupported));
  }
  // An object the body may leave out, with no default of its own, is switched on by the user.
  const optional = !required && s.default === undefined && id !== '';
  return { id, key, label: words(key), hint: s.description, kind: 'object', optional, constant, children };
}

/** The form of a document's JobRequest: `{ root, unsupported }` (ids the form cannot set). */
export function jobForm(doc, name = 'JobRequest') {
  const unsupported = [];
  const root = objectControl(deref(doc.components.schemas[name], doc), doc, '', '', true, unsupported);
  return { root, unsupported };
}

/** A fresh form state: the schema's defaults for booleans and unions, optional parts off. */
export function initialState(root) {
  const state = { values: {}, on: {}, variant: {}, count: {} };
  const visit = (c) => {
    if (c.kind === 'object') c.children.forEach(visit);
    if (c.kind === 'boolean' && c.default !== undefined) state.values[c.id] = c.default;
    if (c.kind === 'union' && c.default !== undefined) {
      const d = c.variants.find((v) => v.control.constant?.value === c.default[v.control.constant.key]);
      if (d) state.variant[c.id] = d.name;
    }
  };
  visit(root);
  return state;
}

/** The item controls of an array of objects, one per item in the state. */
export function itemsOf(c, state) {
  return Array.from({ length: state.count[c.id] ?? 0 }, (_, i) =>
    relabel(c.item(), `${c.id}[]`, `${c.id}[${i}]`),
  );
}

function relabel(c, from, to) {
  const out = { ...c, id: to + c.id.slice(from.length) };
  if (c.children) out.children = c.children.map((x) => relabel(x, from, to));
  if (c.variants) out.variants = c.variants.map((v) => ({ ...v, control: relabel(v.control, from, to) }));
  if (c.item) out.item = () => relabel(c.item(), from, to);
  return out;
}

const split = (text, sep) =>
  String(text)
    .split(sep)
    .map((x) => x.trim())
    .filter(Boolean);

/** What the user typed as the request's value; undefined leaves the field out (its default applies). */
function leafValue(c, raw) {
  if (c.kind === 'boolean') return raw === undefined || raw === (c.default ?? false) ? undefined : raw;
  if (raw === undefined || String(raw).trim() === '') return undefined;
  if (c.kind === 'number' || c.kind === 'integer') {
    const n = Number(raw);
    // Not a number: sent as typed, so the service's 400 names the field.
    return Number.isFinite(n) ? n : String(raw);
  }
  if (c.kind === 'list') {
    const xs = split(raw, ',');
    return c.single && xs.length === 1 ? xs[0] : xs;
  }
  if (c.kind === 'lines') return split(raw, '\n');
  if (c.kind === 'map') {
    return Object.fromEntries(
      split(raw, ',').map((pair) => {
        const [k, v] = pair.split(/[=:]/).map((x) => x.trim());
        return [k, Number(v)];
      }),
    );
  }
  return String(raw).trim();
}

/** The request body the state describes (fields left empty are left out). */
export function bodyOf(c, state) {
  if (c.kind === 'object') {
    if (c.optional && !state.on[c.id]) return undefined;
    const out = c.constant ? { [c.constant.key]: c.constant.value } : {};
    for (const child of c.children) {
      const v = bodyOf(child, state);
      if (v !== undefined) out[child.key] = v;
    }
    return c.optional || c.id === '' || Object.keys(out).length > 0 ? out : undefined;
  }
  if (c.kind === 'union') {
    const v = c.variants.find((x) => x.name === state.variant[c.id]);
    return v === undefined ? undefined : bodyOf(v.control, state);
  }
  if (c.kind === 'items') {
    const items = itemsOf(c, state).map((item) => bodyOf(item, state) ?? {});
    return items.length === 0 ? undefined : items;
  }
  return leafValue(c, state.values[c.id]);
}
