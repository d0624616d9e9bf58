// A Node agent's memory on bindings/js, without MCP: open a folder as the
// memory root, store what the agent learned, recall it, open an entry and
// follow its links. Run it with
//
//   node examples/node-agent/agent.mjs [DIR]
//
// DIR (default: a fresh temporary folder) is a plain folder of markdown
// afterwards: open it with `arbor --root DIR tree`, in an editor, in git.
// No LLM is involved: the agent decides what to store, as an MCP client
// does with arbor-curate.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openMemory, nodeFs, ArborError } from 'arbor-memory';

/**
 * What the agent learned in a conversation, as curate operations
 * (docs/design.md, Curation): one entry per piece of knowledge, with a reason.
 */
export const learned = [
  {
    type: 'UPSERT',
    path: 'projects/checkout',
    title: 'Payment provider decision',
    summary: 'Checkout moves from Stripe to Adyen in Q3; Stripe stays for subscriptions.',
    content: {
      narrative: {
        highlights: 'Adyen wins on fees for EU cards (0.9% vs 1.4%) and local methods (iDEAL, Bancontact).',
        rules: 'New one-off payment flows use Adyen. Subscriptions stay on Stripe Billing until 2027.',
      },
      facts: [
        { subject: 'checkout provider', statement: 'Adyen from Q3', category: 'decision' },
        { subject: 'subscriptions provider', statement: 'Stripe Billing until 2027', category: 'decision' },
      ],
      tags: ['payments', 'decision'],
      keywords: ['adyen', 'stripe', 'psp'],
    },
    reason: 'decided in the checkout planning call with Maria',
  },
  {
    type: 'UPSERT',
    path: 'people/team',
    title: 'Maria Keller',
    summary: 'Payments lead; owns the provider migration; prefers written proposals over calls.',
    content: {
      narrative: 'Maria leads payments and owns the Adyen migration. She prefers a written proposal before any meeting.',
      relations: ['projects/checkout/payment_provider_decision.md'],
      tags: ['people'],
    },
    reason: 'remember who owns the migration and how she likes to work',
  },
];

/** Runs the agent's memory steps on dir; log receives what it would say. */
export async function run(dir, log = console.log) {
  const mem = await openMemory({ storage: nodeFs(dir) });
  try {
    log(`opened ${dir}: ${mem.opened.entries} entries`);

    // 1. Store: every operation gets a result; a failed one does not throw.
    const res = await mem.curate(learned);
    for (const op of res.applied) log(`${op.status === 'success' ? '✓' : '✗'} ${op.type} ${op.path} (${op.message})`);

    // 2. Recall: tiers 0–2 answer without an LLM when one entry stands out.
    const q = await mem.query('which payment provider does checkout use?');
    log(`query → tier ${q.tier} (${q.tierName}) in ${q.tookMs.toFixed(1)} ms`);
    if (q.outOfDomain) log('memory has nothing on this');
    else if (q.needsLLM) log(`no single answer; candidates for a model: ${q.results.map((r) => r.path).join(', ')}`);
    else log(`answer: ${q.answer.split('\n')[0]}`);

    // 3. Read the best source in full, with its links both ways.
    const entry = await mem.read(q.results[0].path);
    log(`read ${entry.path}: "${entry.title}", backlinks: ${entry.backlinks.join(', ') || 'none'}`);
    for (const back of entry.backlinks) {
      const linked = await mem.read(back);
      log(`  ← ${linked.title}: ${linked.summary}`);
    }

    // 4. Bad input is an ArborError with a stable code, never a crash.
    try {
      await mem.read('../outside.md');
    } catch (err) {
      if (!(err instanceof ArborError)) throw err;
      log(`refused: ${err.code}`);
    }

    // 5. What the memory covers now.
    const tree = await mem.tree({ depth: 2 });
    log(`tree: ${tree.children.map((d) => `${d.name}/ (${d.children?.map((t) => t.name).join(', ')})`).join('; ')}`);
  } finally {
    // Writes the lifecycle signals and the index, so the next open is fast.
    await mem.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const dir = process.argv[2] ?? fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-agent-'));
  await run(dir);
}
