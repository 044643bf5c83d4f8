#!/usr/bin/env node
// Lint: every bare import in packages/*/src must be declared in that package's package.json
// (what nx's dependency-checks rule enforces), and node built-ins must use the "node:" prefix.
import fs from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const problems = [];

function* jsFiles(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* jsFiles(full);
    else if (/\.(m?js|cjs)$/.test(entry.name)) yield full;
  }
}

const packagesDir = path.join(root, 'packages');
for (const name of fs.readdirSync(packagesDir)) {
  const dir = path.join(packagesDir, name);
  const src = path.join(dir, 'src');
  if (!fs.existsSync(src)) continue;
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const declared = new Set(Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }));
  for (const file of jsFiles(src)) {
    const text = fs.readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(/(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)]
      .map((m) => m[1] ?? m[2]);
    for (const spec of specifiers) {
      if (spec.startsWith('.') || spec.startsWith('node:')) continue;
      const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      const where = path.relative(root, file);
      if (builtinModules.includes(pkg)) problems.push(`${where}: use "node:${pkg}"`);
      else if (!declared.has(pkg)) problems.push(`${where}: imports ${pkg}, which ${manifest.name} does not declare`);
    }
  }
}

for (const p of problems) console.error(p);
if (problems.length) process.exit(1);
console.log('lint: ok');
