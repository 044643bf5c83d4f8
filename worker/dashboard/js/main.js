// Loads every page module (each registers its routes at import), then starts the router.
import {start} from './core.js';

const PAGES = [
  'overview', 'batches', 'batch', 'run', 'compare',
  'leaderboard', 'regressions', 'costs', 'datasets', 'fleets', 'stress',
];

async function load(name) {
  try {
    await import(`./pages/${name}.js`);
  } catch (err) {
    // A page module that fails to load leaves its routes out; the others still work.
    // A missing module (TypeError) is skipped; any other failure is reported.
    if (!(err instanceof TypeError)) console.error(`page ${name}:`, err);
  }
}

await Promise.all(PAGES.map(load));
start();
