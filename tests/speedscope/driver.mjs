// driver.mjs — open speedscope JSON files in the real speedscope app and
// report what speedscope itself made of them.
//
//   node driver.mjs [--screenshot OUT.png] [--view time|left|sandwich] FILE...
//
// Serves speedscope's built app (node_modules/speedscope/dist/release) and
// the files on 127.0.0.1, opens each as #profileURL=... in headless Debian
// Chromium (/usr/bin/chromium, driven by playwright-core; never a downloaded
// browser), waits until speedscope shows the profile, then presses Ctrl+S:
// speedscope exports its own model of the loaded profiles (one evented
// profile per profile, endValue = the total weight speedscope computed),
// which the driver reads from the download.  For each FILE one JSON line:
//   {"file", "ok", "profiles", "names", "units", "totals", "nonIdle",
//    "toolbar", "schemaErrors", "errors", "frames" (names, when at most 5000),
//    "spans" (per profile: {outermost frame's name: [durations]})}
// "schemaErrors" lists where FILE breaks speedscope's published JSON schema
// (dist/release/file-format-schema.json, checked by the small validator
// below).  Exit status: 0 when every file loaded, 1 otherwise, 2 on setup
// failure.
import { createServer } from 'node:http';
import { readFileSync, mkdtempSync, rmSync, existsSync } from 'node:fs';
import { join, dirname, basename, extname } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const app = join(here, 'node_modules/speedscope/dist/release');

const args = process.argv.slice(2);
let screenshot = null, view = null;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--screenshot') screenshot = args[++i];
  else if (args[i] === '--view') view = args[++i];
  else files.push(args[i]);
}
if (!files.length) {
  console.error('usage: node driver.mjs [--screenshot OUT.png] [--view time|left|sandwich] FILE...');
  process.exit(2);
}
if (!existsSync(join(app, 'index.html'))) {
  console.error('driver: speedscope is not installed; run tests/speedscope/setup.sh');
  process.exit(2);
}

// ---- a minimal JSON-schema (draft-07 subset) validator for speedscope's schema ----
function validate(schema, root, v, path, errs) {
  if (errs.length > 20) return;
  if (schema.$ref) {
    const name = schema.$ref.replace('#/definitions/', '');
    return validate(root.definitions[name], root, v, path, errs);
  }
  if (schema.anyOf) {
    for (const s of schema.anyOf) {
      const e = [];
      validate(s, root, v, path, e);
      if (!e.length) return;
    }
    errs.push(`${path}: matches none of the allowed shapes`);
    return;
  }
  const t = schema.type;
  const isType = {
    object: x => x !== null && typeof x === 'object' && !Array.isArray(x),
    array: Array.isArray,
    string: x => typeof x === 'string',
    number: x => typeof x === 'number' && Number.isFinite(x),
  };
  if (t && !isType[t](v)) {
    errs.push(`${path}: ${v === null ? 'null' : typeof v} where the schema wants ${t}`);
    return;
  }
  if ('const' in schema && v !== schema.const) errs.push(`${path}: must be ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.includes(v)) errs.push(`${path}: ${JSON.stringify(v)} is not one of ${schema.enum.join(', ')}`);
  if (t === 'object') {
    for (const k of schema.required || []) if (!(k in v)) errs.push(`${path}: "${k}" is missing`);
    for (const [k, s] of Object.entries(schema.properties || {}))
      if (k in v) validate(s, root, v[k], `${path}.${k}`, errs);
  }
  if (t === 'array' && schema.items) {
    // Large arrays: check the first and last thousand items.
    const n = v.length;
    for (let i = 0; i < n; i++) {
      if (i === 1000 && n > 2000) i = n - 1000;
      validate(schema.items, root, v[i], `${path}[${i}]`, errs);
    }
  }
}
const schema = JSON.parse(readFileSync(join(app, 'file-format-schema.json'), 'utf8'));
function schemaErrors(text) {
  let doc;
  try { doc = JSON.parse(text); } catch (e) { return [`not JSON: ${e.message}`]; }
  const errs = [];
  validate(schema.$ref ? schema : { $ref: '#/definitions/FileFormat.File' }, schema, doc, '$', errs);
  return errs;
}

// ---- the server: speedscope's app at /, the files at /f/N/NAME ----
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.png': 'image/png', '.wasm': 'application/wasm', '.woff2': 'font/woff2', '.ico': 'image/x-icon' };
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  let path;
  const m = url.pathname.match(/^\/f\/(\d+)\//);
  if (m) path = files[Number(m[1])];
  else path = join(app, url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname).replace(/\.\.+/g, ''));
  try {
    const body = readFileSync(path);
    res.writeHead(200, { 'content-type': types[extname(path)] || 'application/octet-stream' });
    res.end(body);
  } catch {
    res.writeHead(404);
    res.end('not found');
  }
});
await new Promise(r => server.listen(0, '127.0.0.1', r));
const port = server.address().port;

let chromium;
try {
  ({ chromium } = require('playwright-core'));
} catch (e) {
  console.error(`driver: playwright-core is missing (${e.message}); run tests/speedscope/setup.sh`);
  process.exit(2);
}
const userDataDir = mkdtempSync(join(tmpdir(), 'sp-chromium-'));
const downloads = mkdtempSync(join(tmpdir(), 'sp-downloads-'));
let ctx;
try {
  ctx = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    acceptDownloads: true,
    downloadsPath: downloads,
    viewport: { width: 1400, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
} catch (e) {
  console.error(`driver: cannot start /usr/bin/chromium: ${e.message.split('\n')[0]}`);
  server.close();
  rmSync(userDataDir, { recursive: true, force: true });
  process.exit(2);
}

let failed = 0;
for (let i = 0; i < files.length; i++) {
  const file = files[i];
  const out = { file, ok: false, profiles: 0, names: [], units: [], totals: [], nonIdle: [], toolbar: '',
    schemaErrors: [], errors: [] };
  try {
    out.schemaErrors = schemaErrors(readFileSync(file, 'utf8'));
  } catch (e) {
    out.errors.push(`cannot read ${file}: ${e.code || e.message}`);
    failed++;
    console.log(JSON.stringify(out));
    continue;
  }
  const page = await ctx.newPage();
  // Anything but http(s) to 127.0.0.1 is refused: the test is offline.
  await page.route(/.*/, route => {
    const u = new URL(route.request().url());
    if (u.hostname === '127.0.0.1' || u.protocol === 'data:' || u.protocol === 'blob:') route.continue();
    else route.abort();
  });
  page.on('pageerror', e => out.errors.push(`page error: ${e.message}`));
  page.on('console', m => {
    if (m.type() === 'error' || /^Failed to load/.test(m.text())) out.errors.push(`console: ${m.text().split('\n')[0]}`);
    else if (process.env.SP_DRIVER_DEBUG === '1') console.error(`console.${m.type()}: ${m.text()}`);
  });
  try {
    const profileURL = `http://127.0.0.1:${port}/f/${i}/${encodeURIComponent(basename(file))}`;
    await page.goto(`http://127.0.0.1:${port}/#profileURL=${encodeURIComponent(profileURL)}`);
    // Loaded when the toolbar shows the Export tab (only present with a profile).
    // speedscope logs "Failed to load format ..." when it cannot import.
    const loaded = page.getByText('Export', { exact: false }).first().waitFor({ timeout: 30000 });
    loaded.catch(() => {});
    const failedLoad = new Promise(res => {
      const t = setInterval(() => { if (out.errors.length) { clearInterval(t); res(); } }, 100);
      loaded.then(() => clearInterval(t), () => clearInterval(t));
    });
    await Promise.race([loaded, failedLoad]);
    if (out.errors.length) throw new Error('speedscope could not load the file');
    out.toolbar = (await page.locator('body').innerText()).split('\n').slice(0, 6).join(' | ');
    if (view) {
      const label = { time: 'Time Order', left: 'Left Heavy', sandwich: 'Sandwich' }[view];
      await page.getByText(label).first().click();
      await page.waitForTimeout(500);
    }
    if (screenshot && i === files.length - 1) await page.screenshot({ path: screenshot });
    const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.keyboard.press('Control+s')]);
    const exported = JSON.parse(readFileSync(await dl.path(), 'utf8'));
    out.profiles = exported.profiles.length;
    if (exported.shared.frames.length <= 5000) out.frames = exported.shared.frames.map(f => f.name);
    for (const p of exported.profiles) {
      out.names.push(p.name);
      out.units.push(p.unit);
      out.totals.push(p.endValue - p.startValue);
      // Weight under some frame: the spans of the outermost open/close events;
      // spans: per outermost frame's name, its spans' durations (ptimeline's
      // calls, as speedscope measured them).
      let depth = 0, opened = 0, busy = 0, frame = -1;
      const spans = {};
      for (const e of p.events) {
        if (e.type === 'O') { if (depth++ === 0) { opened = e.at; frame = e.frame; } }
        else if (--depth === 0) {
          busy += e.at - opened;
          const n = exported.shared.frames[frame].name;
          (spans[n] = spans[n] || []).push(e.at - opened);
        }
      }
      out.nonIdle.push(busy);
      (out.spans = out.spans || []).push(spans);
    }
    out.ok = out.errors.length === 0;
  } catch (e) {
    out.errors.push(e.message.split('\n')[0]);
    if (process.env.SP_DRIVER_DEBUG === '1') await page.screenshot({ path: `/tmp/sp-driver-fail-${i}.png` });
  }
  if (!out.ok) failed++;
  console.log(JSON.stringify(out));
  await page.close();
}
await ctx.close();
server.close();
rmSync(userDataDir, { recursive: true, force: true });
rmSync(downloads, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
