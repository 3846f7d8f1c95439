#!/usr/bin/env node
// Chromium timings of psvg's SVGs, for tests/bench/psvg-bench.sh:
//   node tests/browser/bench.js FILE.svg [RUNS]
// Prints "load_ms N", "zoom_ms N" (median over several frames, each zoom
// timed until the browser has drawn the next frame), "search_ms N",
// "frames N", "drawn N", and "session_ms ..." (zoom into the widest frame,
// then the deepest, reset, search: medians; printed, never asserted).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { launch } = require('./chromium');

const file = path.resolve(process.argv[2]);
const runs = +(process.argv[3] || 5);
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };

(async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'psvg-bench-'));
	const ctx = await launch(dir, { width: 1280, height: 1000 });
	const page = await ctx.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	const loads = [];
	for (let i = 0; i < runs; i++) {
		await page.goto('about:blank');
		const t0 = Date.now();
		await page.goto('file://' + file, { waitUntil: 'load' });
		await page.waitForFunction(() => window.spflame && window.spflame.api);
		// until the first frame is painted
		await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
		loads.push(Date.now() - t0);
	}
	// Zoom into frames of several sizes: the widest children of the root's
	// heaviest paths, and a few random ones; each timed to the next paint.
	const zooms = await page.evaluate(async () => {
		const api = spflame.api, n = api.state().frames, out = [];
		const pick = [];
		for (let k = 1; k <= 16; k++) pick.push(Math.floor(n * k / 17));
		for (const i of pick) {
			const t0 = performance.now();
			api.zoom(i);
			await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
			out.push({ ms: performance.now() - t0, drawn: api.state().drawn });
			api.zoom(0);
			await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		}
		api.zoom(0);
		await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		const t0 = performance.now();
		api.zoom(1);
		await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		out.push({ ms: performance.now() - t0, drawn: api.state().drawn, top: 1 });
		return out;
	});
	const search = await page.evaluate(async () => {
		const t0 = performance.now();
		spflame.api.search('a');
		await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		return performance.now() - t0;
	});
	// A person's session: zoom into the widest frame, then the deepest,
	// reset, search; each timed to the next paint, median of `runs`.
	const sess = await page.evaluate(async (runs) => {
		if (!spflame.api.extremes) return null; /* an SVG of an older psvg */
		const api = spflame.api, ex = api.extremes(), t = { widest: [], deepest: [], reset: [], search: [] };
		const paint = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		const time = async (k, fn) => { const t0 = performance.now(); fn(); await paint(); t[k].push(performance.now() - t0); };
		api.reset();
		await paint();
		for (let r = 0; r < runs; r++) {
			await time('widest', () => api.zoom(ex.widest));
			await time('deepest', () => api.zoom(ex.deepest));
			await time('reset', () => api.reset());
			await time('search', () => api.search('a'));
			api.reset();
			await paint();
		}
		return t;
	}, runs);
	const med = (k) => median(sess[k]).toFixed(1);
	if (!sess) console.log('session_ms - (this SVG\'s script has no api.extremes: made by an older psvg)');
	else console.log(`session_ms widest ${med('widest')} deepest ${med('deepest')} reset ${med('reset')} search ${med('search')}` +
		` slowest ${Math.max(...Object.values(sess).flat()).toFixed(1)} (target: every zoom < 100)`);
	const st = await page.evaluate(() => { spflame.api.reset(); return spflame.api.state(); });
	console.log(`load_ms ${median(loads)}`);
	console.log(`zoom_ms ${median(zooms.map((z) => z.ms)).toFixed(1)}`);
	console.log(`zoom_max_ms ${Math.max(...zooms.map((z) => z.ms)).toFixed(1)}`);
	console.log(`zoom_top_ms ${zooms[zooms.length - 1].ms.toFixed(1)} (drawn ${zooms[zooms.length - 1].drawn})`);
	console.log(`search_ms ${search.toFixed(1)}`);
	console.log(`frames ${st.frames}`);
	console.log(`drawn ${st.drawn}`);
	if (errors.length) console.log(`errors ${errors.join('; ')}`);
	await ctx.close();
	fs.rmSync(dir, { recursive: true, force: true });
})();
