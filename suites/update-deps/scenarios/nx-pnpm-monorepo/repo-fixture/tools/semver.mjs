// The subset of semver ranges the vendored registry needs: exact versions, ^, ~, x-ranges,
// comparison operators, space-separated AND and "||" OR. Prereleases only match a range
// that names a prerelease of the same major.minor.patch (npm's rule).

export function parse(version) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/.exec(version.trim());
  if (!m) return null;
  return { major: +m[1], minor: +m[2], patch: +m[3], pre: m[4] ? m[4].split('.') : [] };
}

export function compare(a, b) {
  for (const k of ['major', 'minor', 'patch']) if (a[k] !== b[k]) return a[k] - b[k];
  if (!a.pre.length || !b.pre.length) return b.pre.length - a.pre.length;
  for (let i = 0; i < Math.max(a.pre.length, b.pre.length); i++) {
    if (a.pre[i] === undefined) return -1;
    if (b.pre[i] === undefined) return 1;
    const x = /^\d+$/.test(a.pre[i]) ? +a.pre[i] : a.pre[i];
    const y = /^\d+$/.test(b.pre[i]) ? +b.pre[i] : b.pre[i];
    if (x !== y) return typeof x === typeof y ? (x < y ? -1 : 1) : typeof x === 'number' ? -1 : 1;
  }
  return 0;
}

function partial(text) {
  const [core, pre] = text.split('-', 2);
  const parts = core.split('.').map((p) => (p === 'x' || p === 'X' || p === '*' ? null : +p));
  while (parts.length < 3) parts.push(null);
  return { major: parts[0], minor: parts[1], patch: parts[2], pre: pre ? pre.split('.') : [] };
}

const v = (major, minor = 0, patch = 0, pre = []) => ({ major, minor, patch, pre });

function comparators(token) {
  const m = /^(\^|~|>=|<=|>|<|=)?(.*)$/.exec(token);
  const op = m[1] || '=';
  const p = partial(m[2]);
  const lo = v(p.major ?? 0, p.minor ?? 0, p.patch ?? 0, p.pre);
  if (p.major === null) return [];
  if (op === '^') {
    const hi = p.major > 0 || p.minor === null ? v(p.major + 1) : p.minor > 0 || p.patch === null ? v(0, p.minor + 1) : v(0, 0, p.patch + 1);
    return [['>=', lo], ['<', hi]];
  }
  if (op === '~') return [['>=', lo], ['<', p.minor === null ? v(p.major + 1) : v(p.major, p.minor + 1)]];
  if (op === '=') {
    if (p.minor === null) return [['>=', lo], ['<', v(p.major + 1)]];
    if (p.patch === null) return [['>=', lo], ['<', v(p.major, p.minor + 1)]];
    return [['=', lo]];
  }
  return [[op, lo]];
}

export function satisfies(version, range) {
  const ver = typeof version === 'string' ? parse(version) : version;
  if (!ver) return false;
  return range.split('||').some((alt) => {
    const tokens = alt.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).filter(Boolean);
    const comps = tokens.flatMap(comparators);
    if (ver.pre.length && !comps.some(([, b]) => b.pre.length && b.major === ver.major && b.minor === ver.minor && b.patch === ver.patch)) {
      return false;
    }
    return comps.every(([op, b]) => {
      const c = compare(ver, b);
      return { '=': c === 0, '>=': c >= 0, '<=': c <= 0, '>': c > 0, '<': c < 0 }[op];
    });
  });
}

export function maxSatisfying(versions, range) {
  const ok = versions.filter((x) => satisfies(x, range)).sort((a, b) => compare(parse(a), parse(b)));
  return ok.at(-1) ?? null;
}
