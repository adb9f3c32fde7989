/** `paramine domain remove`: the entry leaves domains.json first (readers stop using it), then its files go. */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ParamineError } from '../errors.js';
import { DOMAINS_DIR, domainDir, domainNameSchema, readDomains, writeDomains } from './manifest.js';

export async function removeDomain(indexDir: string, name: string): Promise<void> {
  domainNameSchema.parse(name);
  const all = await readDomains(indexDir);
  const building = join(indexDir, DOMAINS_DIR, `.${name}.building`);
  if (all[name] === undefined) {
    // An interrupted `domain add` leaves only its staging directory: removing it is what the user wants.
    const had = await rm(building, { recursive: true }).then(
      () => true,
      () => false,
    );
    if (had) return;
    throw new ParamineError('NOT_FOUND', `no domain '${name}' on this index`, { field: 'name' });
  }
  delete all[name];
  await writeDomains(indexDir, all);
  await rm(domainDir(indexDir, name), { recursive: true, force: true });
  await rm(building, { recursive: true, force: true });
}
