#!/usr/bin/env node
// psvg --flamechart against flamegraph.pl --flamechart's rule, read through
// the SVG's own API (spflame.api.frame) in headless Chromium.
//
//   node tests/browser/flamechart.test.js CASE...
//
// A CASE is NAME:SVG:FOLDED:LABELS.  FOLDED holds the samples in the order
// the chart draws them ("frames value" lines).  flamegraph.pl's rule: a
// sample's frames merge with the previous sample's only over their common
// prefix from the root; everything above it starts new frames, and time
// advances by the sample's value.  LABELS (comma-separated, may be empty):
// frames each at least one pixel wide on the screen (a thread's root frame).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const { launch, needPlaywright, tap } = require('./chromium');
needPlaywright('flame chart browser tests');
const t = tap('browser');
const { ok, notok, check } = t;

// The frames flamegraph.pl --flamechart draws: depth (1 = first frame), name, start, width.
function rule(folded) {
	const out = [];
	let last = [], open = [], t = 0;
	for (const line of fs.readFileSync(folded, 'utf8').split('\n')) {
		const m = line.match(/^(.*) (\d+(?:\.\d+)?)$/);
		if (!m) continue;
		const st = m[1].split(';'), v = +m[2];
		let same = 0;
		while (same < st.length && same < last.length && st[same] === last[same]) same++;
		for (let d = last.length - 1; d >= same; d--) out.push({ depth: d + 1, name: last[d], x: open[d], w: t - open[d] });
		for (let d = same; d < st.length; d++) open[d] = t;
		last = st;
		t += v;
	}
	for (let d = last.length - 1; d >= 0; d--) out.push({ depth: d + 1, name: last[d], x: open[d], w: t - open[d] });
	return { frames: out, total: t };
}

(async () => {
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'psvg-chart-'));
	const ctx = await launch(tmp, { width: 1280, height: 900 });
	const page = await ctx.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	try {
		for (const c of process.argv.slice(2)) {
			const [name, svg, folded, labels] = c.split(':');
			errors.length = 0;
			await page.goto('file://' + svg);
			await page.waitForFunction(() => window.spflame && window.spflame.api);
			const got = await page.evaluate(() => {
				const a = spflame.api, r = [];
				for (let i = 0; i < a.state().frames; i++) r.push(a.frame(i));
				return r;
			});
			const want = rule(folded);
			const total = got[0].w, k = total / want.total, eps = 1e-9 * total;
			check(`${name}: the chart loads without script errors`, errors.length === 0, errors.join('; '));
			check(`${name}: the root spans the samples' total`, Math.abs(total - want.total * k) <= eps && total > 0,
				`${total} vs ${want.total}`);
			// every frame of the rule is in the chart, same place, same width
			const at = new Map();
			for (const f of got.slice(1)) if (f.w > 0) at.set(`${f.depth}:${Math.round(f.x / k * 1e6)}`, f);
			let missing = [], extra = 0;
			for (const f of want.frames) {
				const g = at.get(`${f.depth}:${Math.round(f.x * 1e6)}`);
				if (!g || g.name.replace(/_\[[kjiw]\]$/, '') !== f.name || Math.abs(g.w - f.w * k) > eps)
					missing.push(`${f.name}@${f.depth}:${f.x}+${f.w}` + (g ? ` (chart: ${g.name} +${g.w / k})` : ''));
			}
			extra = at.size - want.frames.length;
			check(`${name}: ${want.frames.length} frames as flamegraph.pl --flamechart draws them`,
				missing.length === 0 && extra === 0, `${missing.length} differ: ${missing.slice(0, 3).join(', ')}; ${extra} extra`);
			for (const l of (labels || '').split(',').filter(Boolean)) {
				const box = await page.evaluate((l) => {
					const i = spflame.api.find(l);
					return i < 0 ? null : spflame.api.box(i);
				}, l);
				check(`${name}: ${l} is visible`, box && box.w >= 1, JSON.stringify(box));
			}
		}
	} finally {
		await ctx.close();
		fs.rmSync(tmp, { recursive: true, force: true });
	}
})().catch((e) => {
	notok('flame chart browser run', e.message);
	process.exit(0);
});
