/** A multi-line description, one source line a line (Markdown in the OpenAPI document). */
export const md = (...lines: string[]): string => lines.join('\n');
