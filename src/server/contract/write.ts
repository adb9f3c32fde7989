/** `npm run openapi`: writes the generated document to openapi.yaml (committed; a test compares them). */
import { writeFileAtomic } from '../../durable.js';
import { committedOpenApi } from './document.js';

const out = new URL('../../../openapi.yaml', import.meta.url);
await writeFileAtomic(out.pathname, committedOpenApi());
process.stderr.write(`wrote ${out.pathname}\n`);
