'use strict';
// Unknown-field ("misspelt field") detection for Kubernetes objects.
//
// kubernetes-models' JSON-schema validators do not set additionalProperties:false,
// so `imagePullPolicyy: Always` passes .validate(). This module walks the object
// alongside the TypeScript declarations (*.d.ts) that kubernetes-models ships, which
// list every known field of every type, and reports fields that are not declared.
// No extra dependency: only the .d.ts files of kubernetes-models and
// @kubernetes-models/apimachinery are read (generated, very regular format).
//
// Types with no declared fields (RawExtension, FieldsV1, apiextensions JSON, ...)
// are treated as open: anything below them is accepted.

const fs = require('fs');
const path = require('path');

function pkgDir(name, from) {
  // package.json is not exported by these packages; resolve the main entry instead
  // and walk up to the directory holding package.json.
  let d = path.dirname(require.resolve(name, from ? { paths: [from] } : undefined));
  while (!fs.existsSync(path.join(d, 'package.json'))) d = path.dirname(d);
  return d;
}
const KM_DIR = pkgDir('kubernetes-models');
const AM_DIR = pkgDir('@kubernetes-models/apimachinery', KM_DIR);

const fileCache = new Map();

function stripComments(src) {
  return src.replace(/\/\*[\s\S]*?\*\//g, '');
}

// Parse one generated .d.ts file into
// { imports: {localName: absFile}, interfaces: {name: {props: {field: type}, index: type|null}},
//   aliases: {exportedName: localName}, typeAliases: Set }
function parseDts(file) {
  if (fileCache.has(file)) return fileCache.get(file);
  const src = stripComments(fs.readFileSync(file, 'utf8'));
  const info = { file, imports: {}, interfaces: {}, aliases: {}, typeAliases: new Set() };
  for (const m of src.matchAll(/^import \{ ([^}]+) \} from "([^"]+)";$/gm)) {
    let target = m[2];
    if (target === '@kubernetes-models/base') continue;
    if (target.startsWith('.')) target = path.resolve(path.dirname(file), target);
    else if (target.startsWith('@kubernetes-models/apimachinery/')) target = path.join(AM_DIR, target.slice('@kubernetes-models/apimachinery/'.length));
    else if (target.startsWith('kubernetes-models/')) target = path.join(KM_DIR, target.slice('kubernetes-models/'.length));
    else continue;
    for (const n of m[1].split(',').map((s) => s.trim())) {
      const [orig, local] = n.split(/\s+as\s+/);
      info.imports[(local || orig).trim()] = { file: target + '.d.ts', name: orig.trim() };
    }
  }
  for (const m of src.matchAll(/^export \{ ([^}]+) \};$/gm)) {
    for (const n of m[1].split(',')) {
      const [orig, alias] = n.trim().split(/\s+as\s+/);
      if (alias) info.aliases[alias.trim()] = orig.trim();
    }
  }
  for (const m of src.matchAll(/^export declare type (\w+) =/gm)) info.typeAliases.add(m[1]);
  // interfaces: body runs until a line that is exactly "}"
  for (const m of src.matchAll(/^export interface (\w+)(?: extends [\w, ]+)? \{\n([\s\S]*?)^\}$/gm)) {
    const body = m[2];
    const iface = { props: {}, index: null };
    // properties are at 4-space indent; a type may span lines ({ ... } maps)
    const lines = body.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const pm = /^ {4}"([^"]+)"\??: (.*)$/.exec(lines[i]);
      if (!pm) continue;
      let type = pm[2];
      if (!type.endsWith(';')) {
        while (++i < lines.length) {
          type += ' ' + lines[i].trim();
          if (/^ {4}\S/.test(lines[i])) break;
        }
      }
      iface.props[pm[1]] = type.replace(/;$/, '').replace(/\s+/g, ' ').trim();
    }
    const im = /^ {4}\[key: string\]: (.*);$/m.exec(body);
    if (im) iface.index = im[1];
    info.interfaces[m[1]] = iface;
  }
  fileCache.set(file, info);
  return info;
}

// Resolve a type name as seen from `file` to {kind:'iface', iface, file} or {kind:'leaf'}
function resolveName(file, name) {
  const info = parseDts(file);
  const local = info.aliases[name] || name;
  if (info.interfaces[local]) return { kind: 'iface', iface: info.interfaces[local], file };
  if (info.typeAliases.has(local)) return { kind: 'leaf' };
  const imp = info.imports[name];
  if (imp && fs.existsSync(imp.file)) return resolveName(imp.file, imp.name);
  return { kind: 'unknown' };
}

function splitTopUnion(t) {
  const parts = [];
  let depth = 0, cur = '';
  for (const ch of t) {
    if (ch === '<' || ch === '{') depth++;
    if (ch === '>' || ch === '}') depth--;
    if (ch === '|' && depth === 0) { parts.push(cur.trim()); cur = ''; } else cur += ch;
  }
  parts.push(cur.trim());
  return parts;
}

function check(value, type, file, p, out) {
  if (value === null || value === undefined) return;
  type = type.trim();
  const alts = splitTopUnion(type);
  if (alts.length > 1) {
    // only literal/primitive unions occur in practice; nothing to walk
    return;
  }
  let m;
  if ((m = /^Array<([\s\S]*)>$/.exec(type))) {
    if (Array.isArray(value)) value.forEach((v, i) => check(v, m[1], file, `${p}/${i}`, out));
    return;
  }
  if ((m = /^\{ \[key: string\]: ([\s\S]*); \}$/.exec(type))) {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) check(v, m[1], file, `${p}/${esc(k)}`, out);
    }
    return;
  }
  if (/^[A-Z]\w*$/.test(type)) {
    const r = resolveName(file, type);
    if (r.kind === 'iface') checkIface(value, r.iface, r.file, p, out);
  }
  // primitives / string literals: type errors are the JSON schema's job
}

function esc(k) {
  return String(k).replace(/~/g, '~0').replace(/\//g, '~1');
}

function checkIface(value, iface, file, p, out) {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return;
  const known = Object.keys(iface.props);
  if (known.length === 0 && !iface.index) return; // open type (RawExtension, JSON, FieldsV1...)
  for (const [k, v] of Object.entries(value)) {
    if (Object.prototype.hasOwnProperty.call(iface.props, k)) check(v, iface.props[k], file, `${p}/${esc(k)}`, out);
    else if (iface.index) check(v, iface.index, file, `${p}/${esc(k)}`, out);
    else out.push({ instancePath: p, key: k, message: `unknown field "${k}"${suggest(k, known)}` });
  }
}

function lev(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++)
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
  return d[a.length][b.length];
}
function suggest(k, known) {
  let best = null, bd = Infinity;
  for (const c of known) {
    const d = lev(k.toLowerCase(), c.toLowerCase());
    if (d < bd) { bd = d; best = c; }
  }
  return best && bd <= Math.max(2, Math.floor(k.length / 4)) ? ` (did you mean "${best}"?)` : '';
}

// Returns an array of {instancePath (JSON pointer of the parent object), key, message}.
function unknownFields(apiVersion, kind, obj) {
  const file = path.join(KM_DIR, apiVersion, kind + '.d.ts');
  if (!fs.existsSync(file)) return [];
  const info = parseDts(file);
  const iface = info.interfaces['I' + kind];
  if (!iface) return [];
  const out = [];
  checkIface(obj, iface, file, '', out);
  return out;
}

module.exports = { unknownFields };
