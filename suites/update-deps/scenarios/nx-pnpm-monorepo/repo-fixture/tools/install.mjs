#!/usr/bin/env node
// Offline stand-in for `pnpm install`. The vendored registry holds, per package, a metadata
// document vendor/registry/<name>/index.json (versions, dist-tags, peer dependencies,
// deprecations, like a registry's package document) and the files of each version in
// vendor/registry/<name>/<version>/. For the root and each workspace package, every declared
// range resolves to the highest vendored version that satisfies it and
// <importer>/node_modules/<name> is linked to that copy (`workspace:` ranges link the
// workspace package). Peer dependencies are checked like pnpm's strict-peer-dependencies.
// Deprecations are warnings; any other problem is an error and the exit status is 1.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { maxSatisfying, satisfies } from './semver.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const registry = path.join(root, 'vendor', 'registry');
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

function workspaceGlobs() {
  const text = fs.readFileSync(path.join(root, 'pnpm-workspace.yaml'), 'utf8');
  return [...text.matchAll(/^\s*-\s*['"]?([^'"\n]+)['"]?\s*$/gm)].map((m) => m[1]);
}

function workspacePackages() {
  const out = new Map();
  for (const glob of workspaceGlobs()) {
    if (!glob.endsWith('/*')) throw new Error(`unsupported workspace glob ${glob}`);
    const dir = path.join(root, glob.slice(0, -2));
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const manifest = path.join(dir, entry.name, 'package.json');
      if (entry.isDirectory() && fs.existsSync(manifest)) out.set(readJson(manifest).name, path.join(dir, entry.name));
    }
  }
  return out;
}

const workspace = workspacePackages();
const errors = [];
const summary = [];
const warnings = [];

function resolve(name, spec, importer) {
  if (spec.startsWith('workspace:')) {
    const dir = workspace.get(name);
    if (!dir) return errors.push(`${importer}: ${name} is not a workspace package`), null;
    const range = spec.slice('workspace:'.length);
    const version = readJson(path.join(dir, 'package.json')).version;
    if (!['*', '^', '~'].includes(range) && !satisfies(version, range)) {
      return errors.push(`${importer}: workspace ${name}@${version} does not satisfy ${range}`), null;
    }
    return { dir, version, peers: {} };
  }
  const pkgDir = path.join(registry, ...name.split('/'));
  const docFile = path.join(pkgDir, 'index.json');
  if (!fs.existsSync(docFile)) return errors.push(`${importer}: ${name} is not in vendor/registry`), null;
  const doc = readJson(docFile);
  const versions = Object.keys(doc.versions);
  const version = doc['dist-tags']?.[spec] ?? maxSatisfying(versions, spec);
  if (!version) {
    return errors.push(`${importer}: no vendored version of ${name} satisfies ${spec} (available: ${versions.join(', ')})`), null;
  }
  const meta = doc.versions[version];
  if (meta.deprecated) warnings.push(`${importer}: ${name}@${version} is deprecated: ${meta.deprecated}`);
  return { dir: path.join(pkgDir, version), version, peers: meta.peerDependencies ?? {} };
}

for (const importerDir of [root, ...workspace.values()]) {
  const manifest = readJson(path.join(importerDir, 'package.json'));
  const importer = path.relative(root, importerDir) || '.';
  const declared = { ...manifest.dependencies, ...manifest.devDependencies };
  const modules = path.join(importerDir, 'node_modules');
  fs.rmSync(modules, { recursive: true, force: true });
  const resolved = new Map();
  for (const [name, spec] of Object.entries(declared)) {
    const hit = resolve(name, spec, importer);
    if (!hit) continue;
    resolved.set(name, hit);
    const link = path.join(modules, ...name.split('/'));
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(path.relative(path.dirname(link), hit.dir), link, 'dir');
    summary.push(`${importer}: ${name}@${hit.version}`);
  }
  for (const [name, hit] of resolved) {
    for (const [peer, range] of Object.entries(hit.peers)) {
      const got = resolved.get(peer);
      if (!got) errors.push(`${importer}: ${name}@${hit.version} needs peer ${peer}@${range}, which is not declared`);
      else if (!satisfies(got.version, range)) {
        errors.push(`${importer}: ${name}@${hit.version} needs peer ${peer}@${range}, found ${got.version}`);
      }
    }
  }
}

for (const line of summary) console.log(`linked ${line}`);
for (const w of warnings) console.warn(`WARN ${w}`);
if (errors.length) {
  for (const e of errors) console.error(`ERR ${e}`);
  process.exit(1);
}
console.log('install: ok');
