/** A minimal SVG string builder: elements with escaped attributes and text, numbers rounded to 0.1 px. */

export type Attrs = Record<string, string | number | undefined>;

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const num = (v: number) => String(Math.round(v * 10) / 10);

function attrs(a: Attrs): string {
  let out = '';
  for (const [k, v] of Object.entries(a)) {
    if (v === undefined) continue;
    out += ` ${k}="${typeof v === 'number' ? num(v) : esc(v)}"`;
  }
  return out;
}

/** `<tag a="…">children</tag>`; children are already-serialized strings. */
export function el(tag: string, a: Attrs = {}, children: readonly string[] = []): string {
  return children.length === 0 ? `<${tag}${attrs(a)}/>` : `<${tag}${attrs(a)}>${children.join('')}</${tag}>`;
}

/** A text element; the content is escaped. */
export function text(content: string, a: Attrs = {}): string {
  return `<text${attrs(a)}>${esc(content)}</text>`;
}

export function svgDocument(
  width: number,
  height: number,
  children: readonly string[],
  title?: string,
): string {
  const head = title === undefined ? [] : [`<title>${esc(title)}</title>`];
  return `${el(
    'svg',
    {
      xmlns: 'http://www.w3.org/2000/svg',
      width,
      height,
      viewBox: `0 0 ${num(width)} ${num(height)}`,
      'font-family': 'DejaVu Sans, Helvetica, Arial, sans-serif',
    },
    [...head, ...children],
  )}\n`;
}
