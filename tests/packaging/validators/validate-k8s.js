#!/usr/bin/env node
// validate-k8s.js FILE.yaml...
// Offline schema validation of Kubernetes manifests (multi-document YAML)
// using kubernetes-models (CJS build, 4.5.1) + yaml (2.9.1).
//
// Exit codes: 0 = all documents valid, 1 = at least one error, 2 = usage error.
//
// Options:
//   --allow-unknown-kinds   warn (don't fail) when no schema exists for apiVersion/kind
//                           (e.g. CRDs). Default: fail.
//   --strict                additionally report fields that are NOT in the Kubernetes
//                           schema (misspellings such as imagePullPolicyy).
//                           kubernetes-models' own validate() does NOT catch these.
'use strict';

const fs = require('fs');
const path = require('path');
const YAML = require('yaml');

const args = process.argv.slice(2);
const files = args.filter((a) => !a.startsWith('--'));
const flags = new Set(args.filter((a) => a.startsWith('--')));
const KNOWN_FLAGS = new Set(['--allow-unknown-kinds', '--strict']);
for (const f of flags) {
  if (!KNOWN_FLAGS.has(f)) {
    console.error(`validate-k8s: unknown option ${f}`);
    process.exit(2);
  }
}
if (files.length === 0) {
  console.error('usage: validate-k8s.js [--allow-unknown-kinds] [--strict] FILE.yaml...');
  process.exit(2);
}

// apiVersion "v1" -> kubernetes-models/v1/<Kind>
// apiVersion "apps/v1" -> kubernetes-models/apps/v1/<Kind>
// apiVersion "rbac.authorization.k8s.io/v1" -> kubernetes-models/rbac.authorization.k8s.io/v1/<Kind>
const API_VERSION_RE = /^(?:[a-z0-9]([a-z0-9.-]*[a-z0-9])?\/)?v[0-9]+(?:(?:alpha|beta)[0-9]+)?$/;
const KIND_RE = /^[A-Z][A-Za-z0-9]*$/;

function loadModel(apiVersion, kind) {
  if (!API_VERSION_RE.test(apiVersion) || !KIND_RE.test(kind)) return null;
  const mod = `kubernetes-models/${apiVersion}/${kind}`;
  try {
    const m = require(mod);
    return typeof m[kind] === 'function' ? m[kind] : null;
  } catch (e) {
    if (e.code === 'MODULE_NOT_FOUND' || e.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') return null;
    throw e;
  }
}

// JSON pointer -> YAML line number (1-based) using the parsed document's node ranges.
// If `key` is given, point at that key inside the mapping at `pointer`.
function lineOf(doc, lc, pointer, key) {
  const segs = pointer
    ? pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    : [];
  const keys = segs.map((s) => (/^[0-9]+$/.test(s) ? Number(s) : s));
  let node = keys.length ? doc.getIn(keys, true) : doc.contents;
  if (node && key !== undefined && YAML.isMap(node)) {
    const pair = node.items.find((it) => it.key && (it.key.value === key || String(it.key) === key));
    if (pair && pair.key && pair.key.range) return lc.linePos(pair.key.range[0]).line;
  }
  if (node && node.range) return lc.linePos(node.range[0]).line;
  return null;
}

function fmtAjvError(e) {
  let msg = `${e.instancePath || '/'}: ${e.message}`;
  if (e.keyword === 'enum' && e.params && e.params.allowedValues) {
    msg += ` (${JSON.stringify(e.params.allowedValues)})`;
  }
  return msg;
}

let strictCheck = null;
if (flags.has('--strict')) strictCheck = require('./k8s-unknown-fields.js');

let nErrors = 0;
let nDocs = 0;
for (const file of files) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    console.error(`${file}: cannot read: ${e.message}`);
    nErrors++;
    continue;
  }
  const lc = new YAML.LineCounter();
  // version '1.1': parse scalars like Kubernetes does (sigs.k8s.io/yaml -> go-yaml v2, YAML 1.1):
  // yes/no/on/off/y/n are booleans, 0644 is octal (=420). YAML 1.2 would read them as strings/644.
  const docs = YAML.parseAllDocuments(text, { lineCounter: lc, prettyErrors: true, version: '1.1' });
  docs.forEach((doc, i) => {
    const startLine = doc.contents && doc.contents.range ? lc.linePos(doc.contents.range[0]).line : 1;
    const where = `${file}: document ${i + 1} (line ${startLine})`;
    if (doc.errors.length) {
      for (const e of doc.errors) console.error(`${where}: YAML error: ${e.message}`);
      nErrors += doc.errors.length;
      return;
    }
    const obj = doc.toJS();
    if (obj === null || obj === undefined) return; // empty document (e.g. trailing ---)
    nDocs++;
    if (typeof obj !== 'object' || Array.isArray(obj)) {
      console.error(`${where}: not a mapping`);
      nErrors++;
      return;
    }
    const { apiVersion, kind } = obj;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
      console.error(`${where}: missing or non-string apiVersion/kind`);
      nErrors++;
      return;
    }
    const name = obj.metadata && obj.metadata.name ? obj.metadata.name : '<no name>';
    const label = `${where} ${apiVersion}/${kind} "${name}"`;
    const Model = loadModel(apiVersion, kind);
    if (!Model) {
      if (flags.has('--allow-unknown-kinds')) {
        console.error(`${label}: WARNING: no schema for ${apiVersion}/${kind}, skipped`);
      } else {
        console.error(`${label}: no schema known for apiVersion "${apiVersion}" kind "${kind}"`);
        nErrors++;
      }
      return;
    }
    let errs = [];
    const at = (p, key) => {
      const l = lineOf(doc, lc, p, key);
      return l ? `line ${l}: ` : '';
    };
    try {
      new Model(obj).validate();
    } catch (e) {
      if (Array.isArray(e.errors)) errs = e.errors.map((er) => at(er.instancePath) + fmtAjvError(er));
      else errs = [String(e && e.message ? e.message : e)];
    }
    if (strictCheck) {
      for (const u of strictCheck.unknownFields(apiVersion, kind, obj)) {
        errs.push(`${at(u.instancePath, u.key)}${u.instancePath || '/'}: ${u.message}`);
      }
    }
    if (errs.length) {
      for (const m of errs) console.error(`${label}: ${m}`);
      nErrors += errs.length;
    } else {
      console.log(`${label}: OK`);
    }
  });
}

if (nErrors) {
  console.error(`validate-k8s: ${nErrors} error(s) in ${nDocs} document(s)`);
  process.exit(1);
}
console.log(`validate-k8s: ${nDocs} document(s) valid`);
