#!/usr/bin/env node
// A view of flame.js depends on the view only, not on the way there: after a
// walk through several views (zooms, the overview, a search), each view must
// be element for element what a fresh page draws for it (loaded with
// #z=FRAME): no attribute, label, element or cached colour group left over
// from an earlier view.  (A redraw that reuses the previous view's elements
// was tried and dropped as slower; this guards any such cache.)
//
//   node tests/browser/redraw.test.js FILE.svg
//
// Prints one line per check: "ok - ...", "not ok - ...".
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const file = path.resolve(process.argv[2]);
const { launch, tap } = require('./chromium');
const { check } = tap('browser redraw');

// Every element under #frames, in document order, with what is drawn.
function snapshot() {
	const out = [];
	for (const e of document.querySelectorAll('#frames *')) {
		const a = [e.tagName];
		for (const k of ['x', 'y', 'width', 'height', 'fill', 'class', 'd']) a.push(e.getAttribute(k));
		if (e.tagName === 'text') a.push(e.textContent);
		if (e.tagName === 'rect') a.push(e.__i);
		out.push(a.join('|'));
	}
	return out;
}

(async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'psvg-redraw-'));
	const b = await launch(dir, { width: 1280, height: 1000 });
	try {
		const page = await b.newPage();
		const errors = [];
		page.on('pageerror', (e) => errors.push(e.message));
		await page.goto('file://' + file);
		await page.waitForFunction(() => window.spflame && window.spflame.api);
		// views: the widest and deepest frames, frames spread over the data,
		// back to the overview between them, and a search on the way
		const views = await page.evaluate(() => {
			const api = spflame.api, ex = api.extremes(), n = api.state().frames, v = [ex.widest, 0, ex.deepest];
			for (let k = 1; k <= 6; k++) v.push(Math.floor(n * k / 7), k % 2 ? 0 : ex.widest);
			return v;
		});
		const seen = {};
		let nonempty = 0, compared = 0;
		for (const z of views) {
			await page.evaluate((z) => spflame.api.zoom(z), z);
			const got = await page.evaluate(snapshot);
			if (!z) continue; /* the overview is the one psvg drew until a redraw */
			if (got.length > 1) nonempty++;
			if (seen[z]) continue;
			seen[z] = 1;
			const fresh = await b.newPage();
			await fresh.goto('file://' + file + '#z=' + z);
			await fresh.waitForFunction(() => window.spflame && window.spflame.api);
			const want = await fresh.evaluate(snapshot);
			await fresh.close();
			let diff = -1;
			for (let k = 0; k < Math.max(got.length, want.length); k++) if (got[k] !== want[k]) { diff = k; break; }
			compared++;
			check(`view of frame ${z} after other views = a fresh page's (${want.length} elements)`, diff < 0,
				diff < 0 ? '' : `element ${diff}: got ${got[diff]}, want ${want[diff]}`);
		}
		check(`the walk drew something in every view (${nonempty} views, ${compared} compared)`, compared >= 4 && nonempty >= compared);
		// a search colours by the same rules after reuse
		await page.evaluate(() => { spflame.api.reset(); spflame.api.zoom(spflame.api.extremes().widest); spflame.api.search('fn1'); });
		const got = await page.evaluate(snapshot);
		const z = await page.evaluate(() => spflame.api.state().zoomed);
		const fresh = await b.newPage();
		await fresh.goto('file://' + file + '#z=' + z + '&s=fn1');
		await fresh.waitForFunction(() => window.spflame && window.spflame.api);
		const want = await fresh.evaluate(snapshot);
		await fresh.close();
		check('a search after reused views = a fresh page with that search', JSON.stringify(got) === JSON.stringify(want) &&
			got.some((l) => l.includes('fn1')));
		check('no script errors', errors.length === 0, errors.join('; '));
	} catch (e) {
		check('browser run', false, String(e && e.message || e).split('\n')[0]);
	}
	await b.close();
	fs.rmSync(dir, { recursive: true, force: true });
	process.exit(0);
})();
